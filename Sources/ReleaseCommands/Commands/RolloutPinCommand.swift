import ArgumentParser
import ClientFoundation
import CommandSupport
import SignedManifest

/// `clientctl rollout pin CHANNEL --target EXPR --version V`.
struct RolloutPinCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pin",
        abstract: "Hold the devices a target admits at most on an older release of the channel.",
        discussion: """
            Re-signs OUT/CHANNEL/manifest.json with a pin (docs/targeting.md#pins): the \
            devices EXPR admits take nothing above VERSION, which must be in the channel's \
            index.json; one below it takes VERSION. No device goes down to it. Every later \
            publish of the channel carries the pin until `rollout unpin`. A pin with the \
            same target replaces the earlier one; the first pin that admits a device holds.

            A pin no device could follow is refused, nothing signed: to a VERSION the \
            channel's release revokes (exit 65), or to one whose manifest has expired (exit \
            77; --allow-expired pins it anyway, and the devices it holds keep what they run \
            until `rollout unpin`).

            Examples:
              clientctl rollout pin stable --out releases --key k.pem \\
                --target 'site = lobby' --version 1.4.0
              # hold the lobby where it is, on an old release that has expired
              clientctl rollout pin stable --out releases --key k.pem \\
                --target 'site = lobby' --version 1.4.0 --allow-expired
            """
    )

    @OptionGroup var edit: ChannelEditOptions
    @OptionGroup var target: TargetOption
    @Option(name: .long, help: ArgumentHelp("The release the devices stay on at most.", valueName: "VERSION"))
    var version: Version

    @Flag(
        name: .customLong("allow-expired"),
        help: "Pin to a release whose manifest has expired: the devices it holds keep what they run until it is unpinned.")
    var allowExpired = false

    func validate() throws {
        guard try target.expression() != nil else { throw ValidationError("--target EXPR says which devices are pinned") }
    }

    func run() async throws {
        try await runReportingErrors {
            guard let expression = try target.expression() else { return }
            try await edit.apply(.pin(expression, version), allowExpired: allowExpired)
        }
    }
}

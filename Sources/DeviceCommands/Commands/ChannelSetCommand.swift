import ArgumentParser
import ClientUpdater
import CommandSupport
import SignedArchive

/// `clientctl channel set CHANNEL`: follows another channel the trust root allows.
struct ChannelSetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set",
        abstract: "Follow CHANNEL from the next check (one the trust root allows; the root's own channel undoes a choice).",
        discussion: """
            The channel's manifest is read from the sibling folder of the root's own \
            channel (.../CHANNEL/manifest.json, as publish lays releases out) unless \
            --manifest-url names it. A channel name off the rule, or a URL the device's URL \
            rules refuse, exits 64; a channel the trust root does not let this device choose \
            exits 77. Nothing is written then.

            Examples:
              clientctl channel set --root /var/lib/kiosk beta
              clientctl channel set --root /var/lib/kiosk beta \\
                --manifest-url https://cdn.example.com/notes-beta/manifest.json
              clientctl channel set --root /var/lib/kiosk stable
            """
    )

    @OptionGroup var device: DeviceOptions
    @Argument(help: ArgumentHelp("The channel to follow.", valueName: "CHANNEL"))
    var channel: String
    @Option(
        name: .customLong("manifest-url"),
        help: ArgumentHelp("Where CHANNEL's manifest.json is, when not in the sibling folder of the root's own channel.", valueName: "URL"))
    var manifestURL: String?

    func run() async throws {
        try await runReportingErrors {
            let (before, after) = try await ChannelMove.set(channel, manifestURL: manifestURL, layout: try device.layout())
            printError(ChannelText.changed(before, after))
        }
    }
}

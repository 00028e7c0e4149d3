import ArgumentParser
import CommandSupport

/// `clientctl rollout unpin CHANNEL (--target EXPR | --all)`.
struct RolloutUnpinCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unpin",
        abstract: "Drop a pin (or every pin) of the channel's release.",
        discussion: """
            Re-signs OUT/CHANNEL/manifest.json without the pin of EXPR (the same target as \
            `rollout pin` was given; spacing does not matter), or without any pin (--all). \
            The devices it held take the channel's release again at their next check.

            Examples:
              clientctl rollout unpin stable --out releases --key k.pem --target 'site = lobby'
              clientctl rollout unpin stable --out releases --key k.pem --all
            """
    )

    @OptionGroup var edit: ChannelEditOptions
    @OptionGroup var target: TargetOption
    @Flag(help: "Drop every pin.")
    var all = false

    func validate() throws {
        let expression = try target.expression()
        guard (expression == nil) == all else { throw ValidationError("give either --target EXPR or --all") }
    }

    func run() async throws {
        try await runReportingErrors {
            try await edit.apply(.unpin(try target.expression()))
        }
    }
}

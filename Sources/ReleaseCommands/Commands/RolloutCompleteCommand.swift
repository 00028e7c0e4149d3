import ArgumentParser
import CommandSupport

/// `clientctl rollout complete CHANNEL`.
struct RolloutCompleteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "complete",
        abstract: "Let every device take the channel's release (the rollout ends).",
        discussion: """
            Examples:
              clientctl rollout complete stable --out releases --key k.pem
            """
    )

    @OptionGroup var edit: ChannelEditOptions

    func run() async throws {
        try await runReportingErrors { try await edit.apply(.complete) }
    }
}

import ArgumentParser
import CommandSupport

/// `clientctl rollout resume CHANNEL`.
struct RolloutResumeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resume",
        abstract: "Go on with the paused rollout as scheduled.",
        discussion: """
            Examples:
              clientctl rollout resume stable --out releases --key k.pem
            """
    )

    @OptionGroup var edit: ChannelEditOptions

    func run() async throws {
        try await runReportingErrors { try await edit.apply(.resume) }
    }
}

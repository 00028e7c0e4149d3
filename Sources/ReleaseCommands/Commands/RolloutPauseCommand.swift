import ArgumentParser
import CommandSupport

/// `clientctl rollout pause CHANNEL`.
struct RolloutPauseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pause",
        abstract: "Stop new installs of the channel's release (installed devices stay).",
        discussion: """
            Examples:
              clientctl rollout pause stable --out releases --key k.pem
            """
    )

    @OptionGroup var edit: ChannelEditOptions

    func run() async throws {
        try await runReportingErrors { try await edit.apply(.pause) }
    }
}

import ArgumentParser

/// `clientctl rollout …`: staged rollouts of a channel's current release.
struct RolloutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rollout",
        abstract: "Stage, pause, resume or complete the rollout of a channel's release.",
        discussion: """
            Each subcommand but restrict and guard re-signs OUT/CHANNEL/manifest.json (same \
            release and archive, a later `published`) and its index.json entry; restrict \
            writes OUT/CHANNEL/restriction.json with the trust root's rollout key, and guard \
            does when the fleet's reports say the release fails. Devices decide by their own id \
            which of them take the release; no server logic is needed.

            Examples:
              clientctl rollout set stable --out releases --key k.pem \\
                --steps 0:5,1d:25,2d:100
              clientctl rollout pause stable --out releases --key k.pem
              clientctl rollout resume stable --out releases --key k.pem
              clientctl rollout complete stable --out releases --key k.pem
              clientctl rollout set stable --out releases --key k.pem \\
                --target 'ring = beta' --percent 50
              clientctl rollout pin stable --out releases --key k.pem \\
                --target 'site = lobby' --version 1.4.0
            """,
        subcommands: [
            RolloutSetCommand.self, RolloutPauseCommand.self, RolloutResumeCommand.self, RolloutCompleteCommand.self,
            RolloutRestrictCommand.self, RolloutGuardCommand.self, RolloutPinCommand.self, RolloutUnpinCommand.self,
        ]
    )
}

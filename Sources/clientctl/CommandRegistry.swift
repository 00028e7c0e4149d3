import ArgumentParser

/// Every subcommand, in the order `--help` lists them. Add one line per command.
enum CommandRegistry {
    static let all: [any ParsableCommand.Type] = [
        KeygenCommand.self,
        PublishCommand.self,
        PushCommand.self,
        PruneCommand.self,
        SignCommand.self,
        RootCommand.self,
        VerifyCommand.self,
        ManifestCommand.self,
        RolloutCommand.self,
        RevokeCommand.self,
        InitCommand.self,
        InstallCommand.self,
        StatusCommand.self,
        ListCommand.self,
        ServeCommand.self,
        ReloadCommand.self,
        AckCommand.self,
        RollbackCommand.self,
        GcCommand.self,
    ]
}

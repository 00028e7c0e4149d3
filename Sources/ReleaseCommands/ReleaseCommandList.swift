import ArgumentParser

/// The commands of the release engineer's machine (keys, releases, channels, storage, the
/// fleet), in the order `clientctl --help` lists them. Add one line per command.
package enum ReleaseCommandList {
    /// Every release command.
    package static let commands: [any ParsableCommand.Type] = [
        KeygenCommand.self,
        PublishCommand.self,
        PushCommand.self,
        PruneCommand.self,
        ExportCommand.self,
        SignCommand.self,
        RootCommand.self,
        VerifyCommand.self,
        ManifestCommand.self,
        RolloutCommand.self,
        CohortCommand.self,
        RevokeCommand.self,
        CollectCommand.self,
        ConsoleCommand.self,
        OperatorCommand.self,
        PackageCommand.self,
        RepoCommand.self,
        FleetCommand.self,
        AuditCommand.self,
    ]
}

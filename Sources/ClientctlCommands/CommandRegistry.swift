import ArgumentParser

/// Every subcommand, in the order `--help` lists them, grouped by the side it runs on.
/// Add one line per command; the overview and the help tests follow from these lists.
enum CommandRegistry {
    /// Commands of the release engineer's machine: keys, releases, channels, storage.
    static let release: [any ParsableCommand.Type] = [
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
        CollectCommand.self,
        PackageCommand.self,
        RepoCommand.self,
        FleetCommand.self,
    ]

    /// Commands of the device: its root, installs, the watchdog and the local server.
    static let device: [any ParsableCommand.Type] = [
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

    /// The two groups as `clientctl --help` lists them.
    static let groups: [CommandGroup] = [
        CommandGroup(name: "Release", subcommands: release),
        CommandGroup(name: "Device", subcommands: device),
    ]
}

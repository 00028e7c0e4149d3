import ArgumentParser

/// The commands of the device (its root, installs, the watchdog and the local server), in
/// the order `clientctl --help` lists them. Add one line per command.
package enum DeviceCommandList {
    /// Every device command.
    package static let commands: [any ParsableCommand.Type] = [
        InitCommand.self,
        InstallCommand.self,
        StatusCommand.self,
        ListCommand.self,
        LabelCommand.self,
        DownloadCommand.self,
        ChannelCommand.self,
        ServeCommand.self,
        ReloadCommand.self,
        AckCommand.self,
        RollbackCommand.self,
        GcCommand.self,
        MirrorCommand.self,
    ]
}

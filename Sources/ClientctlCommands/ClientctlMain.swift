import CommandSupport

/// The entry point of the full `clientctl` (Sources/clientctl): every command. The device
/// program a package ships has its own, with the device commands only (``DeviceMain``).
public enum ClientctlMain {
    /// Parses the process's arguments and runs the command; exits with its status.
    public static func run() async {
        await ClientctlRoot.main(Clientctl.self)
    }
}

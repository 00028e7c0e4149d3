/// The entry point of `clientctl` for the programs that hold it: `clientctl` itself and the
/// multi-call `clientctl-device` of packaged apps.
public enum ClientctlMain {
    /// Parses the process's arguments and runs the command; exits with its status.
    public static func run() async {
        await Clientctl.main()
    }
}

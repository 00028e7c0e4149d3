/// The entry point of `clientctl-shell` for the programs that hold it: `clientctl-shell`
/// itself and the multi-call `clientctl-device` of packaged apps.
public enum ShellMain {
    /// Parses the process's arguments and runs the shell on this (the main) thread, which
    /// GTK then owns; exits with its status.
    public static func run() {
        ShellCommand.main()
    }
}

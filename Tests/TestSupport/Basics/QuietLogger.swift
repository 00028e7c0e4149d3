import Logging

extension Logger {
    /// A logger that drops everything: for engines and servers a test builds in-process,
    /// whose info lines would otherwise fill the test run's output.
    public static var quiet: Logger { Logger(label: "clientctl.test", factory: { _ in SwiftLogNoOpLogHandler() }) }
}

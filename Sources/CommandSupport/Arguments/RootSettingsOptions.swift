import ArgumentParser
import ClientUpdater

/// The root settings `init` writes and `package` puts in a device template: how long a new
/// version has to start, and how many versions retention keeps.
package struct RootSettingsOptions: ParsableArguments {
    package init() {}

    @Option(
        name: .customLong("startup-timeout"),
        help: ArgumentHelp("Seconds a new version has to report start-up before it is rolled back.", valueName: "SECONDS"))
    package var startupTimeout = Seconds(10)
    @Option(help: ArgumentHelp("How many installed versions retention keeps (1–1000).", valueName: "N"))
    package var keep: Int = 3

    package func validate() throws {
        try startupTimeout.requireStartupTimeout()
        guard DeviceConfig.keepRange.contains(keep) else { throw ValidationError("--keep \(keep) is out of range: 1…1000") }
    }
}

import ArgumentParser
import DeviceSetup

/// The settings `init` writes and `package` puts in a device template (DeviceSetup's
/// ``DeviceSettings``): how long a new version has to start, how many versions retention
/// keeps, where fleet reports go. A new shared setting is a flag here and a field there.
package struct RootSettingsOptions: ParsableArguments {
    package init() {}

    @Option(
        name: .customLong("startup-timeout"),
        help: ArgumentHelp("Seconds a new version has to report start-up before it is rolled back.", valueName: "SECONDS"))
    package var startupTimeout = Seconds(10)
    @Option(help: ArgumentHelp("How many installed versions retention keeps (1–1000).", valueName: "N"))
    package var keep: Int = 3
    @Option(
        name: .customLong("report-url"),
        help: ArgumentHelp(
            "Base URL of the fleet-report collector the devices send reports to (https:, or http: to loopback).", valueName: "URL"))
    package var reportURL: String?

    /// The settings as one value.
    package var deviceSettings: DeviceSettings {
        DeviceSettings(startupTimeoutSeconds: startupTimeout.value, keep: keep, reportURL: reportURL)
    }

    package func validate() throws {
        try startupTimeout.requireStartupTimeout()
        guard DeviceSettings.keepRange.contains(keep) else { throw ValidationError("--keep \(keep) is out of range: 1…1000") }
    }
}

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
    @Option(
        name: .customLong("apply-window"),
        help: ArgumentHelp(
            "A maintenance window, local time HH:MM-HH:MM[@Area/City] (02:00-04:00; may cross midnight); repeat for several.",
            valueName: "WINDOW"))
    package var applyWindows: [String] = []
    @Option(
        name: .customLong("timezone"),
        help: ArgumentHelp("IANA time zone of windows that name none, e.g. Europe/Berlin (default: the device's own).", valueName: "ZONE"))
    package var timeZone: String?

    /// The settings as one value.
    package var deviceSettings: DeviceSettings {
        DeviceSettings(
            startupTimeoutSeconds: startupTimeout.value, keep: keep, reportURL: reportURL, applyWindows: applyWindows,
            applyTimeZone: timeZone)
    }

    package func validate() throws {
        try startupTimeout.requireStartupTimeout()
        guard DeviceSettings.keepRange.contains(keep) else { throw ValidationError("--keep \(keep) is out of range: 1…1000") }
        if timeZone != nil, applyWindows.isEmpty { throw ValidationError("--timezone goes with --apply-window") }
        if let problem = deviceSettings.fieldProblem(allowInsecureHTTP: true), problem.field.hasPrefix("apply") {
            throw ValidationError(problem.problem)
        }
    }
}

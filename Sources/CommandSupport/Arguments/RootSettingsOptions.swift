import ArgumentParser
import DeviceIdentity
import DeviceSetup
import DeviceTargeting

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
    @Option(
        name: .customLong("time-server"),
        help: ArgumentHelp(
            "A Roughtime server for authenticated time, roughtime://HOST:PORT; repeat for several, each with its --time-server-key.",
            valueName: "URL"))
    package var timeServers: [String] = []
    @Option(
        name: .customLong("time-server-key"),
        help: ArgumentHelp(
            "The long-term Ed25519 public key of the --time-server at the same place (base64 or hex).", valueName: "KEY"))
    package var timeServerKeys: [String] = []
    @Option(
        name: .customLong("time-quorum"),
        help: ArgumentHelp("How many time servers must agree (default: a majority of them).", valueName: "N"))
    package var timeQuorum: Int?
    @Option(
        name: .customLong("label"),
        help: ArgumentHelp(
            "A device label KEY=VALUE that release targets read (store=12, ring=beta); repeat for several (docs/targeting.md).",
            valueName: "KEY=VALUE"))
    package var labels: [String] = []

    /// The `--label` flags as labels; nil when one does not read (``validate()`` says why).
    package var deviceLabels: DeviceLabels? { try? Self.labels(labels) }

    /// `KEY=VALUE` texts as labels, refusing a bad one or a key given twice.
    /// - Throws: `DeviceIdentityError` `.invalidLabel` naming the text and why.
    package static func labels(_ assignments: [String]) throws -> DeviceLabels {
        try DeviceLabels(assignments: assignments)
    }

    /// The settings as one value.
    package var deviceSettings: DeviceSettings {
        DeviceSettings(
            startupTimeoutSeconds: startupTimeout.value, keep: keep, reportURL: reportURL, applyWindows: applyWindows,
            applyTimeZone: timeZone,
            timeServers: zip(timeServers, timeServerKeys).map { TimeServerSetting(address: $0, key: $1) }, timeQuorum: timeQuorum,
            labels: deviceLabels ?? DeviceLabels())
    }

    package func validate() throws {
        do {
            _ = try Self.labels(labels)
        } catch let error as DeviceIdentityError {
            throw ValidationError("--label: \(error.message)")
        }
        try startupTimeout.requireStartupTimeout()
        guard DeviceSettings.keepRange.contains(keep) else { throw ValidationError("--keep \(keep) is out of range: 1…1000") }
        if timeZone != nil, applyWindows.isEmpty { throw ValidationError("--timezone goes with --apply-window") }
        if let problem = deviceSettings.fieldProblem(allowInsecureHTTP: true), problem.field.hasPrefix("apply") {
            throw ValidationError(problem.problem)
        }
        guard timeServers.count == timeServerKeys.count else {
            throw ValidationError(
                "--time-server is given \(timeServers.count) times and --time-server-key \(timeServerKeys.count): each server needs its key")
        }
        if let problem = deviceSettings.fieldProblem(allowInsecureHTTP: true), problem.field.hasPrefix("time") {
            let flag = problem.field == "timeQuorum" ? "--time-quorum" : "--time-server"
            throw ValidationError(problem.problem.hasPrefix("time server") ? problem.problem : "\(flag) \(problem.problem)")
        }
    }
}

import ArgumentParser
import ClientFoundation
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
    @Option(
        name: .customLong("download-window"),
        help: ArgumentHelp(
            "A download window, local time HH:MM-HH:MM[@Area/City] (01:00-05:00; may cross midnight); repeat for several"
                + " (default: any time).",
            valueName: "WINDOW"))
    package var downloadWindows: [String] = []
    @Option(
        name: .customLong("download-rate"),
        help: ArgumentHelp("The most a download takes, as 2MB/s, 500KiB/s or 20Mbit/s (default: no cap).", valueName: "RATE"))
    package var downloadRate: String?
    @Option(
        name: .customLong("metered"),
        help: ArgumentHelp(
            "What a metered link allows: never, patches:SIZE (a patch up to SIZE, as patches:5MB) or always (the default).",
            valueName: "MODE"))
    package var metered: String?
    @Option(
        name: .customLong("metered-interface"),
        help: ArgumentHelp(
            "A network interface counted as metered where NetworkManager cannot tell (wwan0); repeat for several.", valueName: "NAME"))
    package var meteredInterfaces: [String] = []
    @Flag(
        name: .customLong("error-rollback"),
        help: ArgumentHelp(
            "Let the device roll back on its own a version whose page fails on most of its loads in its first hour of use"
                + " (default: it reports the errors and keeps the version)."))
    package var errorRollback = false

    /// The `--label` flags as labels; nil when one does not read (``validate()`` says why).
    package var deviceLabels: DeviceLabels? { try? Self.labels(labels) }

    /// `KEY=VALUE` texts as labels, refusing a bad one or a key given twice.
    /// - Throws: `DeviceIdentityError` `.invalidLabel` naming the text and why.
    package static func labels(_ assignments: [String]) throws -> DeviceLabels {
        try DeviceLabels(assignments: assignments)
    }

    /// A download setting's problem as its flag's message.
    package static func downloadMessage(_ problem: FieldProblem) -> String {
        switch problem.field {
        case "downloadRate": "--download-rate \(problem.problem)"
        case "metered": "--metered: \(problem.problem)"
        case "meteredInterfaces": "--metered-interface \(problem.problem)"
        default: problem.problem
        }
    }

    /// The settings as one value.
    package var deviceSettings: DeviceSettings {
        var settings = DeviceSettings(
            startupTimeoutSeconds: startupTimeout.value, keep: keep, reportURL: reportURL, applyWindows: applyWindows,
            applyTimeZone: timeZone,
            timeServers: zip(timeServers, timeServerKeys).map { TimeServerSetting(address: $0, key: $1) }, timeQuorum: timeQuorum,
            labels: deviceLabels ?? DeviceLabels(), downloadWindows: downloadWindows, downloadRate: downloadRate, metered: metered,
            meteredInterfaces: meteredInterfaces)
        settings.errorRollback = errorRollback
        return settings
    }

    package func validate() throws {
        do {
            _ = try Self.labels(labels)
        } catch let error as DeviceIdentityError {
            throw ValidationError("--label: \(error.message)")
        }
        try startupTimeout.requireStartupTimeout()
        guard DeviceSettings.keepRange.contains(keep) else { throw ValidationError("--keep \(keep) is out of range: 1…1000") }
        if timeZone != nil, applyWindows.isEmpty, downloadWindows.isEmpty {
            throw ValidationError("--timezone goes with --apply-window or --download-window")
        }
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
        if let problem = deviceSettings.downloadProblem() { throw ValidationError(Self.downloadMessage(problem)) }
    }
}

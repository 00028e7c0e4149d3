import ApplyPolicy
import AuthenticatedTime
import ClientFoundation
import DeviceIdentity
import DeviceTargeting
import Foundation

/// What `clientctl init`, a package's device template and `clientctl package` share: one
/// value, read and written under the same keys in `config.json` and
/// `device-template.json` (beside each file's own keys), checked by one rule.
///
/// A new setting a device owner and a packager both choose is a field here: `init`'s and
/// `package`'s flags (`RootSettingsOptions`), the template and the config carry it with no
/// code of their own.
public struct DeviceSettings: Codable, Sendable, Equatable {
    /// How long a new version has to call `startupDidComplete` (default 10 s).
    public var startupTimeoutSeconds: Double
    /// How many installed versions retention keeps (default 3).
    public var keep: Int
    /// Base URL of the collector fleet reports go to (docs/fleet-reports.md#delivery);
    /// `nil`: no reports. The rule for it is ``DeviceConfig/reportURLProblem(_:allowInsecureHTTP:)``.
    public var reportURL: String?
    /// The device's maintenance windows as typed (`02:00-04:00`, `22:00-02:00@Europe/Berlin`):
    /// a staged release whose apply mode is `window` switches only inside one
    /// (docs/apply-policies.md). Empty: none.
    public var applyWindows: [String]
    /// The IANA zone of the windows that name none (`--timezone`); `nil`: the device's own
    /// zone, read when the windows are used (so a package's template follows each device).
    public var applyTimeZone: String?
    /// The Roughtime servers the device asks for authenticated time, in order
    /// (docs/device-time.md#authenticated-time); empty: none, the device decides by its
    /// wall clock and its floor.
    public var timeServers: [TimeServerSetting]
    /// How many of ``timeServers`` must agree; `nil`: a majority of them.
    public var timeQuorum: Int?
    /// The device's labels (`store=12`, `ring=beta`): what a release's signed target reads
    /// on the device (docs/targeting.md). Sent in the device's signed reports, never to the
    /// release host.
    public var labels: DeviceLabels
    /// The device's download windows as typed, the grammar of ``applyWindows`` (and its
    /// zone, ``applyTimeZone``): a release downloads only inside one (docs/download-policy.md).
    /// Empty: any time.
    public var downloadWindows: [String]
    /// The download rate cap as typed (`2MB/s`, read by `ByteRate`); `nil`: no cap.
    public var downloadRate: String?
    /// What a metered link allows as typed: `never`, `patches:SIZE` or `always`; `nil`:
    /// `always`, as before the setting existed.
    public var metered: String?
    /// Interfaces the device counts as metered (`wwan0`), for a machine without
    /// NetworkManager to ask; empty: none named.
    public var meteredInterfaces: [String]
    /// The device may roll back on its own a version whose page failed on most of its loads
    /// within its first hour of use (docs/page-errors.md#local-rollback); false: it reports
    /// the errors and keeps the version.
    public var errorRollback: Bool = false

    public init(
        startupTimeoutSeconds: Double = 10, keep: Int = 3, reportURL: String? = nil, applyWindows: [String] = [],
        applyTimeZone: String? = nil, timeServers: [TimeServerSetting] = [], timeQuorum: Int? = nil,
        labels: DeviceLabels = DeviceLabels(), downloadWindows: [String] = [], downloadRate: String? = nil, metered: String? = nil,
        meteredInterfaces: [String] = []
    ) {
        self.startupTimeoutSeconds = startupTimeoutSeconds
        self.keep = keep
        self.reportURL = reportURL
        self.applyWindows = applyWindows
        self.applyTimeZone = applyTimeZone
        self.timeServers = timeServers
        self.timeQuorum = timeQuorum
        self.labels = labels
        self.downloadWindows = downloadWindows
        self.downloadRate = downloadRate
        self.metered = metered
        self.meteredInterfaces = meteredInterfaces
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case startupTimeoutSeconds, keep, reportURL, applyWindows, applyTimeZone, timeServers, timeQuorum, labels
        case downloadWindows, downloadRate, metered, meteredInterfaces, errorRollback
    }

    /// Most time servers a device asks.
    package static let maxTimeServers = 8

    /// The quorum in force: ``timeQuorum``, else a majority of ``timeServers``.
    public var effectiveTimeQuorum: Int { timeQuorum ?? (timeServers.count / 2 + 1) }

    /// ``timeServers`` as servers to ask (each was checked before it was written).
    public var roughtimeServers: [RoughtimeServer] {
        timeServers.compactMap { try? RoughtimeServer(address: $0.address, key: $0.key) }
    }

    /// Most maintenance windows a device keeps.
    package static let maxApplyWindows = 16

    /// The device's own time zone (`TZ`, else `/etc/localtime`), when it is an IANA name
    /// windows can be read in.
    /// - Throws: ``DeviceSetupError`` `.invalidArgument` naming the zone and asking for
    ///   `--timezone`, with ApplyPolicy's refusal as its cause.
    package static func systemZone() throws -> TimeZone {
        let identifier = TimeZone.current.identifier
        do {
            return try MaintenanceWindow.acceptedTimeZone(identifier)
        } catch let error as ApplyPolicyError {
            throw DeviceSetupError(
                .invalidArgument,
                "this system's time zone \(Quoting.quoted(identifier)) cannot read windows: \(error.message); pass --timezone",
                underlying: error)
        }
    }

    /// True when a window (apply or download) names no zone and no ``applyTimeZone`` is
    /// set: the device's own zone reads it.
    package var usesSystemZone: Bool {
        applyTimeZone == nil && (applyWindows + downloadWindows).contains { !$0.contains("@") }
    }

    /// The windows read in `zone` where they name none: ``applyTimeZone`` when set, else
    /// `systemZone` (the device's). A window that does not read is left out (``problem(allowInsecureHTTP:)``
    /// refuses it before it is ever written).
    package func maintenanceWindows(systemZone: TimeZone) -> [MaintenanceWindow] {
        applyWindows.compactMap { try? MaintenanceWindow(parsing: $0, timeZone: $0.contains("@") ? nil : applyTimeZone, defaultZone: systemZone) }
    }

    /// The keys these settings take in a file that holds them beside its own.
    static let keys = Set(CodingKeys.allCases.map(\.rawValue))

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        startupTimeoutSeconds = try c.decode(Double.self, forKey: .startupTimeoutSeconds)
        keep = try c.decode(Int.self, forKey: .keep)
        reportURL = try c.decodeIfPresent(String.self, forKey: .reportURL)
        applyWindows = try c.decodeIfPresent([String].self, forKey: .applyWindows) ?? []
        applyTimeZone = try c.decodeIfPresent(String.self, forKey: .applyTimeZone)
        timeServers = try c.decodeIfPresent([TimeServerSetting].self, forKey: .timeServers) ?? []
        timeQuorum = try c.decodeIfPresent(Int.self, forKey: .timeQuorum)
        labels = try c.decodeIfPresent(DeviceLabels.self, forKey: .labels) ?? DeviceLabels()
        downloadWindows = try c.decodeIfPresent([String].self, forKey: .downloadWindows) ?? []
        downloadRate = try c.decodeIfPresent(String.self, forKey: .downloadRate)
        metered = try c.decodeIfPresent(String.self, forKey: .metered)
        meteredInterfaces = try c.decodeIfPresent([String].self, forKey: .meteredInterfaces) ?? []
        errorRollback = try c.decodeIfPresent(Bool.self, forKey: .errorRollback) ?? false
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(startupTimeoutSeconds, forKey: .startupTimeoutSeconds)
        try c.encode(keep, forKey: .keep)
        try c.encodeIfPresent(reportURL, forKey: .reportURL)
        if !applyWindows.isEmpty { try c.encode(applyWindows, forKey: .applyWindows) }
        try c.encodeIfPresent(applyTimeZone, forKey: .applyTimeZone)
        if !timeServers.isEmpty { try c.encode(timeServers, forKey: .timeServers) }
        try c.encodeIfPresent(timeQuorum, forKey: .timeQuorum)
        if !labels.isEmpty { try c.encode(labels, forKey: .labels) }
        if !downloadWindows.isEmpty { try c.encode(downloadWindows, forKey: .downloadWindows) }
        try c.encodeIfPresent(downloadRate, forKey: .downloadRate)
        try c.encodeIfPresent(metered, forKey: .metered)
        if !meteredInterfaces.isEmpty { try c.encode(meteredInterfaces, forKey: .meteredInterfaces) }
        if errorRollback { try c.encode(true, forKey: .errorRollback) }
    }

    /// Startup timeout: more than 0, at most one day.
    package static let startupTimeoutRange: ClosedRange<Double> = Double.leastNonzeroMagnitude...86_400
    /// Retention: 1 to 1,000 versions.
    package static let keepRange: ClosedRange<Int> = 1...1_000

    /// The first setting that is out of range or breaks a rule, as `name why`; nil when
    /// every one is usable. `allowInsecureHTTP` is the root's (a template's is false).
    package func problem(allowInsecureHTTP: Bool) -> String? {
        fieldProblem(allowInsecureHTTP: allowInsecureHTTP).map { "\($0.field) \($0.problem)" }
    }

    /// ``problem(allowInsecureHTTP:)`` naming its setting as a field, for a setup request.
    package func fieldProblem(allowInsecureHTTP: Bool) -> FieldProblem? {
        if !(startupTimeoutSeconds.isFinite && Self.startupTimeoutRange.contains(startupTimeoutSeconds)) {
            return FieldProblem("startupTimeoutSeconds", "\(startupTimeoutSeconds) is out of range (more than 0, at most 86400 seconds)")
        }
        if !Self.keepRange.contains(keep) { return FieldProblem("keep", "\(keep) is out of range (1…1000)") }
        if let reportURL, let problem = DeviceConfig.reportURLProblem(reportURL, allowInsecureHTTP: allowInsecureHTTP) {
            return FieldProblem("reportURL", problem)
        }
        if applyWindows.count > Self.maxApplyWindows {
            return FieldProblem("applyWindows", "lists \(applyWindows.count) windows, at most \(Self.maxApplyWindows)")
        }
        if let problem = timeServersProblem() { return problem }
        do {
            if let applyTimeZone { _ = try MaintenanceWindow.acceptedTimeZone(applyTimeZone) }
            // The shape only: a window without a zone is read in the device's zone when used.
            let utc = TimeZone(identifier: "UTC") ?? TimeZone(secondsFromGMT: 0) ?? .current
            for window in applyWindows {
                _ = try MaintenanceWindow(parsing: window, timeZone: window.contains("@") ? nil : applyTimeZone, defaultZone: utc)
            }
        } catch let error as ApplyPolicyError {
            return FieldProblem(applyTimeZone != nil && error.code == .invalidTimeZone ? "applyTimeZone" : "applyWindows", error.message)
        } catch {
            return FieldProblem("applyWindows", "\(error)")
        }
        return downloadProblem()
    }
}

extension DeviceSettings {
    /// Most download windows and metered interfaces a device keeps.
    package static let maxDownloadWindows = 16
    package static let maxMeteredInterfaces = 16

    /// The first download setting that does not read: a window, the rate, the metered mode,
    /// an interface name.
    package func downloadProblem() -> FieldProblem? {
        if downloadWindows.count > Self.maxDownloadWindows {
            return FieldProblem("downloadWindows", "lists \(downloadWindows.count) windows, at most \(Self.maxDownloadWindows)")
        }
        let utc = TimeZone(identifier: "UTC") ?? TimeZone(secondsFromGMT: 0) ?? .current
        for window in downloadWindows {
            do {
                _ = try DownloadPolicy(windows: [window], zone: applyTimeZone, defaultZone: utc, rate: nil, metered: nil)
            } catch let error as ApplyPolicyError {
                return FieldProblem("downloadWindows", error.message)
            } catch {
                return FieldProblem("downloadWindows", "\(error)")
            }
        }
        if let downloadRate, let problem = ByteRate.problem(downloadRate) { return FieldProblem("downloadRate", problem) }
        if let metered {
            do {
                _ = try MeteredAllowance(parsing: metered)
            } catch let error as ApplyPolicyError {
                return FieldProblem("metered", error.message)
            } catch {
                return FieldProblem("metered", "\(error)")
            }
        }
        if meteredInterfaces.count > Self.maxMeteredInterfaces {
            return FieldProblem("meteredInterfaces", "lists \(meteredInterfaces.count) interfaces, at most \(Self.maxMeteredInterfaces)")
        }
        for name in meteredInterfaces {
            if let problem = Self.interfaceProblem(name) { return FieldProblem("meteredInterfaces", problem) }
        }
        if let twice = meteredInterfaces.first(where: { n in meteredInterfaces.filter { $0 == n }.count > 1 }) {
            return FieldProblem("meteredInterfaces", "names \(Quoting.quoted(twice)) twice")
        }
        return nil
    }

    /// Why `name` is not a network interface name (1 to 15 characters, none of them `/`,
    /// `:`, a space or a control character; not `.` or `..`), or `nil`.
    package static func interfaceProblem(_ name: String) -> String? {
        let bad = name.unicodeScalars.contains { $0.value <= 0x20 || $0.value == 0x7F || $0 == "/" || $0 == ":" || !$0.isASCII }
        if name.isEmpty || name.utf8.count > 15 || bad || name == "." || name == ".." {
            return "\(Quoting.quoted(name)) is not an interface name (1 to 15 ASCII characters, no '/', ':' or spaces, as in wwan0)"
        }
        return nil
    }

    /// The download policy these settings name, windows that name no zone read in
    /// ``applyTimeZone``, else `systemZone`; what does not read is left out (it was refused
    /// before it was written), so an unreadable mode is `always`.
    package func downloadPolicy(systemZone: TimeZone) -> DownloadPolicy {
        DownloadPolicy(
            windows: downloadWindows.compactMap {
                try? MaintenanceWindow(parsing: $0, timeZone: $0.contains("@") ? nil : applyTimeZone, defaultZone: systemZone)
            },
            rate: downloadRate.flatMap(ByteRate.init(parsing:)),
            metered: metered.flatMap { try? MeteredAllowance(parsing: $0) } ?? .always)
    }
}

extension DeviceSettings {
    /// The first time server that cannot be asked, or a quorum that cannot be reached.
    func timeServersProblem() -> FieldProblem? {
        if timeServers.count > Self.maxTimeServers {
            return FieldProblem("timeServers", "lists \(timeServers.count) servers, at most \(Self.maxTimeServers)")
        }
        for server in timeServers {
            do {
                _ = try RoughtimeServer(address: server.address, key: server.key)
            } catch let error as AuthenticatedTimeError {
                return FieldProblem("timeServers", error.message)
            } catch {
                return FieldProblem("timeServers", "\(error)")
            }
        }
        let addresses = timeServers.map(\.address)
        if let twice = addresses.first(where: { a in addresses.filter { $0 == a }.count > 1 }) {
            return FieldProblem("timeServers", "names \(twice) twice: a quorum counts each server once")
        }
        if let timeQuorum {
            if timeServers.isEmpty { return FieldProblem("timeQuorum", "is set but no time server is") }
            if !(1...timeServers.count).contains(timeQuorum) {
                return FieldProblem("timeQuorum", "\(timeQuorum) is out of range (1…\(timeServers.count), the number of time servers)")
            }
        }
        return nil
    }
}

/// A Roughtime server in a device's settings: `roughtime://HOST:PORT` and its long-term
/// Ed25519 public key (base64 or hex), as typed.
public struct TimeServerSetting: Codable, Sendable, Equatable {
    /// `roughtime://HOST:PORT`.
    public var address: String
    /// The server's long-term public key, 32 bytes in base64 (44 characters) or hex (64).
    public var key: String

    /// A server as typed.
    public init(address: String, key: String) {
        self.address = address
        self.key = key
    }
}

/// A file that carries ``DeviceSettings`` beside its own keys (`config.json`, a device
/// template): each setting reads and writes through it, so a new setting is one field of
/// ``DeviceSettings`` and its accessor here.
public protocol CarriesDeviceSettings {
    /// The settings this file carries.
    var deviceSettings: DeviceSettings { get set }
}

extension CarriesDeviceSettings {
    /// How long a new version has to call `startupDidComplete` (default 10 s).
    public var startupTimeoutSeconds: Double {
        get { deviceSettings.startupTimeoutSeconds }
        set { deviceSettings.startupTimeoutSeconds = newValue }
    }
    /// ``startupTimeoutSeconds`` as a `Duration`, as the watchdog takes it (the file keeps
    /// its seconds).
    public var startupTimeout: Duration { .seconds(clamping: deviceSettings.startupTimeoutSeconds) }
    /// How many installed versions retention keeps (default 3).
    public var keep: Int {
        get { deviceSettings.keep }
        set { deviceSettings.keep = newValue }
    }
    /// Base URL of the collector fleet reports go to (`http:`/`https:`, the URL rules of
    /// `URLPolicy`; docs/fleet-reports.md#delivery); `nil`: nothing is sent or recorded.
    public var reportURL: String? {
        get { deviceSettings.reportURL }
        set { deviceSettings.reportURL = newValue }
    }
    /// The device's maintenance windows as typed (docs/apply-policies.md#maintenance-windows).
    public var applyWindows: [String] {
        get { deviceSettings.applyWindows }
        set { deviceSettings.applyWindows = newValue }
    }
    /// The zone of windows that name none; `nil`: the device's own zone.
    public var applyTimeZone: String? {
        get { deviceSettings.applyTimeZone }
        set { deviceSettings.applyTimeZone = newValue }
    }
    /// The device's labels, what a release's signed target reads (docs/targeting.md).
    public var labels: DeviceLabels {
        get { deviceSettings.labels }
        set { deviceSettings.labels = newValue }
    }
    /// The device's download windows as typed (docs/download-policy.md).
    public var downloadWindows: [String] {
        get { deviceSettings.downloadWindows }
        set { deviceSettings.downloadWindows = newValue }
    }
    /// The download rate cap as typed; `nil`: none.
    public var downloadRate: String? {
        get { deviceSettings.downloadRate }
        set { deviceSettings.downloadRate = newValue }
    }
    /// What a metered link allows as typed; `nil`: `always`.
    public var metered: String? {
        get { deviceSettings.metered }
        set { deviceSettings.metered = newValue }
    }
    /// Interfaces counted as metered without NetworkManager.
    public var meteredInterfaces: [String] {
        get { deviceSettings.meteredInterfaces }
        set { deviceSettings.meteredInterfaces = newValue }
    }
}

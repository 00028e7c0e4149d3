import ClientFoundation
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

    public init(startupTimeoutSeconds: Double = 10, keep: Int = 3, reportURL: String? = nil) {
        self.startupTimeoutSeconds = startupTimeoutSeconds
        self.keep = keep
        self.reportURL = reportURL
    }

    enum CodingKeys: String, CodingKey, CaseIterable {
        case startupTimeoutSeconds, keep, reportURL
    }

    /// The keys these settings take in a file that holds them beside its own.
    static let keys = Set(CodingKeys.allCases.map(\.rawValue))

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        startupTimeoutSeconds = try c.decode(Double.self, forKey: .startupTimeoutSeconds)
        keep = try c.decode(Int.self, forKey: .keep)
        reportURL = try c.decodeIfPresent(String.self, forKey: .reportURL)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(startupTimeoutSeconds, forKey: .startupTimeoutSeconds)
        try c.encode(keep, forKey: .keep)
        try c.encodeIfPresent(reportURL, forKey: .reportURL)
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
        return nil
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
}

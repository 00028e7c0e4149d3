import DeviceIdentity
import Foundation

/// What a collector knows of one app and channel: the answer of `GET /v1/fleet`, what
/// `clientctl fleet status` prints and the fleet page draws (docs/fleet-reports.md#the-fleet-summary).
///
/// Every count is of distinct devices: a device that reports the same thing twice counts once.
public struct FleetSummary: Sendable, Equatable, Codable {
    /// The app's identifier.
    public var app: String
    /// The channel's name.
    public var channel: String
    /// When the collector made the summary.
    public var generated: Date
    /// A device is *on* a version *now* when its last report, within this many seconds, ran it.
    public var windowSeconds: Int
    /// The cohort the figures are of: only devices whose latest labels include every one of
    /// these count (`?label=KEY=VALUE`, docs/fleet-reports.md#one-cohorts-figures); nil: every
    /// device of the app and channel (and always from a collector before labels).
    public var labels: [String: String]?
    /// Distinct devices that ever reported (within the collector's retention).
    public var devices: Int
    /// Devices whose last report is older than the window.
    public var silentDevices: Int
    /// The longest-silent devices (at most 100), oldest first.
    public var silent: [SilentDevice]
    /// One entry per listed version, newest SemVer first: the versions with the most
    /// devices (at most 20 of them), and those asked for by name (docs/fleet-reports.md#the-fleet-summary).
    public var versions: [VersionSummary]
    /// The versions not listed, as one entry; absent when every version is listed.
    public var other: FoldedVersions?
    /// Adoption over time: devices on each version at evenly spaced times, oldest first;
    /// devices on versions not listed count under ``otherKey``.
    public var timeline: [TimelinePoint]
    /// The rollout of each listed version as devices saw it, in time order: a point per
    /// change, the latest few per version.
    public var rollouts: [RolloutPoint]

    /// The key of a ``TimelinePoint``'s devices on versions not listed: never a version
    /// (a version has no parentheses).
    public static let otherKey = "(other)"

    /// The `version` of the devices that have not run a version yet: what a device's reports
    /// name as running before it ran anything (its first report, before its first install).
    /// Not a release (no version the updater installs is named so: docs/fleet-reports.md#the-fleet-summary);
    /// `fleet status` and the fleet page count these devices on one line, not as a version.
    public static let noVersion = "none"

    /// ``versions`` without ``noVersion``: the releases.
    public var releases: [VersionSummary] { versions.filter { $0.version != Self.noVersion } }

    /// Devices whose last report within the window ran no version yet (``noVersion``'s ``VersionSummary/devicesNow``).
    public var devicesWithoutVersion: Int { versions.first { $0.version == Self.noVersion }?.devicesNow ?? 0 }

    /// An empty summary.
    public init(app: String, channel: String, generated: Date, windowSeconds: Int) {
        self.app = app
        self.channel = channel
        self.generated = generated
        self.windowSeconds = windowSeconds
        devices = 0
        silentDevices = 0
        silent = []
        versions = []
        other = nil
        timeline = []
        rollouts = []
    }

    /// The encoder of the wire form: sorted keys, dates as RFC 3339 with milliseconds.
    public static func encoder() -> JSONEncoder {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        e.dateEncodingStrategy = .iso8601
        return e
    }

    /// The decoder of the wire form.
    public static func decoder() -> JSONDecoder {
        let d = JSONDecoder()
        d.dateDecodingStrategy = .iso8601
        return d
    }
}

/// One version's figures in a ``FleetSummary``.
public struct VersionSummary: Sendable, Equatable, Codable {
    /// The version (SemVer, or the embedded seed's id).
    public var version: String
    /// Devices whose last report within the window runs it.
    public var devicesNow: Int
    /// Devices that installed it.
    public var installs: Int
    /// Devices that started a trial of it, or rolled it back (a rollback is a trial whose
    /// `trial-started` report may have been lost).
    public var trials: Int
    /// Devices whose trial of it was acknowledged.
    public var commits: Int
    /// Devices that rolled it back, by reason (``ReportReason`` raw values).
    public var rollbacks: [String: Int]
    /// Devices that blacklisted it, by reason.
    public var blacklists: [String: Int]
    /// Devices whose web process died while it was on screen, by reason.
    public var webProcessDeaths: [String: Int]
    /// Devices whose download of it failed, by reason.
    public var downloadFailures: [String: Int]
    /// Devices whose check refused it, by reason.
    public var refusals: [String: Int]
    /// The median of the milliseconds from load to acknowledgement of its commits.
    public var medianAckMs: Int?
    /// Devices that rolled it back over ``trials``, when any.
    public var failureRate: Double?
    /// The rollout last seen for it.
    public var rollout: RolloutSeen?
    /// Devices that installed it and have not switched to it yet (they wait for its apply
    /// policy: a window, idle time, a lease, a start); nil from a collector before apply policies.
    public var staged: Int?
    /// The median and 95th percentile of the milliseconds from staging to switching (its
    /// `switched` reports), when any.
    public var stagedToRunningMedianMs: Int?
    public var stagedToRunningP95Ms: Int?
    /// Devices whose download of it waited for their download policy, by reason (`window`,
    /// `metered`, `held`; docs/download-policy.md); nil from a collector before download policies.
    public var downloadDeferrals: [String: Int]?
    /// The bytes its `downloaded` reports say were downloaded (archives and patches), and of
    /// them the bytes that came from site mirrors (docs/site-mirror.md); nil from a
    /// collector before site mirrors.
    public var downloadedBytes: Int64?
    public var mirrorBytes: Int64?
    /// Its errors after start over the window (`page-errors` reports; docs/page-errors.md#in-the-fleet);
    /// nil when no device reported any use of it, and from a collector before `page-errors`.
    public var errors: ErrorFigures? {
        didSet { errorsPerDeviceHour = errors?.errorsPerDeviceHour }
    }
    /// ``errors``' problems per device-hour, what `ERRORS/DEV-H` shows: kept in step with
    /// ``errors`` (stored, so the JSON carries it for scripts, as `errorsPerDeviceHour`).
    public private(set) var errorsPerDeviceHour: Double?

    /// ``downloadDeferrals``, empty when the collector sent none.
    public var deferrals: [String: Int] { downloadDeferrals ?? [:] }

    /// The share of ``downloadedBytes`` that came from site mirrors, 0…1; nil when nothing
    /// was downloaded.
    public var mirrorShare: Double? {
        guard let downloadedBytes, downloadedBytes > 0 else { return nil }
        return min(1, Double(mirrorBytes ?? 0) / Double(downloadedBytes))
    }

    /// A version with no figures yet.
    public init(version: String) {
        self.version = version
        devicesNow = 0
        installs = 0
        trials = 0
        commits = 0
        rollbacks = [:]
        blacklists = [:]
        webProcessDeaths = [:]
        downloadFailures = [:]
        refusals = [:]
    }
}

/// The versions a ``FleetSummary`` does not list one by one, folded into one entry.
public struct FoldedVersions: Sendable, Equatable, Codable {
    /// How many versions are folded.
    public var versions: Int
    /// Their figures as one version named ``FleetSummary/otherKey``, each count of distinct
    /// devices over all of them (a device in two of them counts once); no median or rollout.
    public var figures: VersionSummary

    /// Folded versions.
    public init(versions: Int, figures: VersionSummary) {
        self.versions = versions
        self.figures = figures
    }
}

/// A device that has not reported within the window.
public struct SilentDevice: Sendable, Equatable, Codable {
    /// Its id.
    public var device: DeviceID
    /// Its last report's time.
    public var lastSeen: Date
    /// The version its last report ran.
    public var running: String

    /// A silent device.
    public init(device: DeviceID, lastSeen: Date, running: String) {
        self.device = device
        self.lastSeen = lastSeen
        self.running = running
    }
}

/// Devices on each version at one time.
public struct TimelinePoint: Sendable, Equatable, Codable {
    /// The time.
    public var time: Date
    /// Version → devices whose last report at or before `time` (within the window) ran it.
    public var devices: [String: Int]

    /// A point.
    public init(time: Date, devices: [String: Int]) {
        self.time = time
        self.devices = devices
    }
}

/// A rollout step or pause as devices saw it.
public struct RolloutPoint: Sendable, Equatable, Codable {
    /// When the first device saw it.
    public var time: Date
    /// The version.
    public var version: String
    /// The percent and pause.
    public var rollout: RolloutSeen

    /// A point.
    public init(time: Date, version: String, rollout: RolloutSeen) {
        self.time = time
        self.version = version
        self.rollout = rollout
    }
}

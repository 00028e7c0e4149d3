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
    /// Distinct devices that ever reported (within the collector's retention).
    public var devices: Int
    /// Devices whose last report is older than the window.
    public var silentDevices: Int
    /// The longest-silent devices (at most 100), oldest first.
    public var silent: [SilentDevice]
    /// One entry per version reported, newest SemVer first.
    public var versions: [VersionSummary]
    /// Adoption over time: devices on each version at evenly spaced times, oldest first.
    public var timeline: [TimelinePoint]
    /// The rollout of each version as devices saw it, in time order (a point per change).
    public var rollouts: [RolloutPoint]

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
    /// Devices that started a trial of it.
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
    /// Devices that rolled it back over devices that started a trial of it, when any did.
    public var failureRate: Double?
    /// The rollout last seen for it.
    public var rollout: RolloutSeen?

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

/// A device that has not reported within the window.
public struct SilentDevice: Sendable, Equatable, Codable {
    /// Its id.
    public var device: String
    /// Its last report's time.
    public var lastSeen: Date
    /// The version its last report ran.
    public var running: String

    /// A silent device.
    public init(device: String, lastSeen: Date, running: String) {
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

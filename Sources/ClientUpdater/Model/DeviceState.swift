import Foundation

/// `<root>/state.json`: everything a device remembers between runs.
///
/// Version ids are the channel's version strings: SemVer text (`1.2.0`) for the archive
/// channel, the manifest `version` for Meteor. `nil` for `current` means the embedded seed.
public struct DeviceState: Codable, Sendable, Equatable {
    public static let currentFormat = "clientctl-state-v1"

    /// A version on trial: activated but not yet confirmed by `startupDidComplete`.
    public struct Trial: Codable, Sendable, Equatable {
        public var version: String
        /// When the trial started (wall clock, for display and crash detection).
        public var startedAt: Date
        /// The pid of the process that ran the trial, to spot a trial left by a dead process.
        public var pid: Int32?
        /// A random id of the updater instance that ran the trial (tells a previous
        /// instance in the same process, or a reused pid, from the live one).
        public var session: String?
        /// The kernel boot id when the trial started: a pid from another boot is dead.
        public var boot: String?
        /// When `pid` started, in clock ticks after boot (`/proc/PID/stat` field 22): a
        /// live process with the same pid but another start time is not the owner.
        public var pidStart: UInt64?
        public init(
            version: String, startedAt: Date, pid: Int32? = nil, session: String? = nil, boot: String? = nil,
            pidStart: UInt64? = nil
        ) {
            self.version = version
            self.startedAt = startedAt
            self.pid = pid
            self.session = session
            self.boot = boot
            self.pidStart = pidStart
        }
        /// A trial of `version` run by `owner`.
        public init(version: String, owner: TrialOwner) {
            self.init(
                version: version, startedAt: owner.startedAt, pid: owner.pid, session: owner.session, boot: owner.boot,
                pidStart: owner.pidStart)
        }
    }

    /// The outcome of the last update check.
    public struct CheckRecord: Codable, Sendable, Equatable {
        public var time: Date
        /// `installed`, `up-to-date`, `no-compatible-release`, `rejected`, `failed`, `stale`.
        public var result: String
        public var message: String
        public init(time: Date, result: String, message: String) {
            self.time = time
            self.result = result
            self.message = message
        }
    }

    /// Meteor channel memory (the original plugin's `WebAppConfiguration`).
    public struct MeteorState: Codable, Sendable, Equatable {
        public var appId: String?
        public var rootURL: String?
        public var cordovaCompatibilityVersion: String?
        public var lastDownloadedVersion: String?
        public init(appId: String? = nil, rootURL: String? = nil, cordovaCompatibilityVersion: String? = nil, lastDownloadedVersion: String? = nil) {
            self.appId = appId
            self.rootURL = rootURL
            self.cordovaCompatibilityVersion = cordovaCompatibilityVersion
            self.lastDownloadedVersion = lastDownloadedVersion
        }
    }

    public var format: String = DeviceState.currentFormat
    /// The version being served; `nil` = the embedded seed.
    public var current: String?
    /// A verified version waiting for the next reload.
    public var pending: String?
    /// The last version that completed start-up.
    public var lastKnownGood: String?
    /// Monotonic floor: the highest release ever accepted (archive channel).
    public var highestAccepted: String?
    /// Versions that failed start-up twice: never selected or downloaded again.
    public var blacklist: [String] = []
    /// Versions that failed start-up once: one more chance.
    public var retry: [String] = []
    public var trial: Trial?
    /// The embedded seed version seen at the last start (shell-update detection).
    public var lastSeenEmbeddedVersion: String?
    /// The ETag of the last manifest fetched, for conditional GET.
    public var manifestETag: String?
    public var lastCheck: CheckRecord?
    public var meteor: MeteorState?

    public init() {}
}

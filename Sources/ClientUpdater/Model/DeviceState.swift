import ClientFoundation
import DeviceSetup
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
        /// When the trial started on `CLOCK_BOOTTIME`, in milliseconds since `boot` began:
        /// how long it has run is measured on it by any process of the same boot, whatever
        /// the wall clock did (nil in a `state.json` written before it was kept).
        public var startedUptimeMs: Int64?
        public init(
            version: String, startedAt: Date, pid: Int32? = nil, session: String? = nil, boot: String? = nil,
            pidStart: UInt64? = nil, startedUptimeMs: Int64? = nil
        ) {
            self.version = version
            self.startedAt = startedAt
            self.pid = pid
            self.session = session
            self.boot = boot
            self.pidStart = pidStart
            self.startedUptimeMs = startedUptimeMs
        }
        /// A trial of `version` run by `owner`.
        package init(version: String, owner: TrialOwner) {
            self.init(
                version: version, startedAt: owner.startedAt, pid: owner.pid, session: owner.session, boot: owner.boot,
                pidStart: owner.pidStart, startedUptimeMs: owner.startedUptime.map(\.inMilliseconds))
        }

        /// How long the trial has run at `instant` (device time `wallClock`): on the boot
        /// clock within the boot it started in, else (another boot, or a trial recorded
        /// before the boot clock was kept) on the wall clock from ``startedAt``, never below zero.
        package func elapsed(at instant: BootInstant, wallClock: Date) -> Duration {
            if let ms = startedUptimeMs, let ran = instant.since(BootInstant(bootID: boot, uptime: .milliseconds(ms))) {
                return ran
            }
            return .seconds(clamping: wallClock.timeIntervalSince(startedAt))
        }
    }

    /// The outcome of the last update check.
    public struct CheckRecord: Codable, Sendable, Equatable {
        public var time: Date
        /// `installed`, `up-to-date`, `no-compatible-release`, `rejected`, `failed`, `stale`,
        /// `no-space` (the disk is full or the release cannot fit: updates stop until space is freed).
        public var result: String
        public var message: String
        public init(time: Date, result: String, message: String) {
            self.time = time
            self.result = result
            self.message = message
        }
    }

    public var format: String = DeviceState.currentFormat
    /// The version being served; `nil` = the embedded seed.
    public var current: String?
    /// A verified version waiting for the next reload.
    public var pending: String?
    /// When ``pending`` was staged (its wait for the apply policy counts from here); `nil`
    /// when nothing is pending or a root from before apply policies staged it.
    public var pendingSince: Date?
    /// The last version that completed start-up.
    public var lastKnownGood: String?
    /// Versions that failed start-up twice: never selected or downloaded again.
    public var blacklist: [String] = []
    /// Versions that failed start-up once: one more chance.
    public var retry: [String] = []
    public var trial: Trial?
    /// The embedded seed version seen at the last start (shell-update detection).
    public var lastSeenEmbeddedVersion: String?
    public var lastCheck: CheckRecord?
    /// What the channel remembers (its manifest ETag, its monotonic floor, …): every key
    /// of `state.json` that is not one of the core's, read and written by the channel.
    package var channelMemory = ChannelSection()

    package init() {}

    enum CodingKeys: String, CodingKey, CaseIterable {
        case format, current, pending, pendingSince, lastKnownGood, blacklist, retry, trial, lastSeenEmbeddedVersion, lastCheck
    }

    static let coreKeys = Set(CodingKeys.allCases.map(\.rawValue))

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        format = try c.decode(String.self, forKey: .format)
        current = try c.decodeIfPresent(String.self, forKey: .current)
        pending = try c.decodeIfPresent(String.self, forKey: .pending)
        pendingSince = try c.decodeIfPresent(Date.self, forKey: .pendingSince)
        lastKnownGood = try c.decodeIfPresent(String.self, forKey: .lastKnownGood)
        blacklist = try c.decode([String].self, forKey: .blacklist)
        retry = try c.decode([String].self, forKey: .retry)
        trial = try c.decodeIfPresent(Trial.self, forKey: .trial)
        lastSeenEmbeddedVersion = try c.decodeIfPresent(String.self, forKey: .lastSeenEmbeddedVersion)
        lastCheck = try c.decodeIfPresent(CheckRecord.self, forKey: .lastCheck)
        channelMemory = try ChannelSection.decode(from: decoder, coreKeys: Self.coreKeys)
    }

    public func encode(to encoder: any Encoder) throws {
        try channelMemory.encode(to: encoder, coreKeys: Self.coreKeys) { encoder in
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(format, forKey: .format)
            try c.encodeIfPresent(current, forKey: .current)
            try c.encodeIfPresent(pending, forKey: .pending)
            try c.encodeIfPresent(pending == nil ? nil : pendingSince, forKey: .pendingSince)
            try c.encodeIfPresent(lastKnownGood, forKey: .lastKnownGood)
            try c.encode(blacklist, forKey: .blacklist)
            try c.encode(retry, forKey: .retry)
            try c.encodeIfPresent(trial, forKey: .trial)
            try c.encodeIfPresent(lastSeenEmbeddedVersion, forKey: .lastSeenEmbeddedVersion)
            try c.encodeIfPresent(lastCheck, forKey: .lastCheck)
        }
    }

    /// The channel's memory read as its own type; an empty memory when the section is
    /// absent or unreadable (the channel then starts over, as on a new root).
    package func memory<Memory: Decodable>(_ type: Memory.Type) -> Memory? {
        try? channelMemory.decode(Memory.self)
    }

    /// Replaces the channel's memory.
    package mutating func setMemory<Memory: Encodable>(_ memory: Memory) {
        if let section = try? ChannelSection(memory) { channelMemory = section }
    }
}

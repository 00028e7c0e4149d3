import ClientFoundation
import DeviceSetup
import Foundation

/// The `status --json` / `list --json` shape. Stable: fields may be added, never renamed.
public struct StatusReport: Codable, Sendable, Equatable {
    /// One installed version as `list` shows it.
    public struct Entry: Codable, Sendable, Equatable {
        public var version: String
        public var path: String
        public var minShell: String?
        public var maxShell: String?
        public var installedAt: Date?
        /// Runs on this root's shell version.
        public var compatible: Bool
        public var blacklisted: Bool
        public var retry: Bool
        public var current: Bool
        public var pending: Bool
        public var lastKnownGood: Bool
    }

    public var root: String
    /// The device's random id (`device-id`): its place in staged rollouts.
    public var deviceId: String?
    /// The device's public key (`device-key.pub`, 64 hex digits), which signs its report
    /// batches and which `clientctl fleet admit` takes; nil before the root has one.
    public var deviceKey: String?
    /// The device's labels (`config.json`), which release targets read (docs/targeting.md).
    public var labels: [String: String]?
    public var app: String
    /// `signed-archive` or `meteor`.
    public var channelKind: String
    /// The release channel the device follows (docs/targeting.md#choosing-a-channel).
    public var channel: String?
    /// The trust root's own channel, when the device follows another one its owner chose.
    public var rootChannel: String?
    /// Every channel the device's trust root lets it follow, its own included (`clientctl
    /// channel set`); nil for a Meteor root.
    public var choosableChannels: [String]?
    /// Why the device does not follow the channel chosen (its root no longer allows it), or
    /// that it moves to it at its next check; nil otherwise.
    public var channelChoice: String?
    public var shellVersion: String
    /// The version being served (`"embedded"` in JSON when the embedded seed runs).
    public var current: RunningVersion
    /// Where the running version came from: `the feed` or `offline media exported <time>`
    /// (docs/offline-media.md#mixed-sites); nil when unknown or the embedded seed runs.
    public var currentSource: String?
    /// The embedded seed's version, when known.
    public var embeddedVersion: String?
    public var pending: String?
    /// What the pending version waits for before it takes over (its apply policy, the
    /// device's windows, the page's leases: docs/apply-policies.md#status); nil when
    /// nothing is pending.
    public var apply: String?
    public var lastKnownGood: String?
    /// What the next fresh start would run by the seed rule (the embedded seed when
    /// nothing installed qualifies).
    public var selected: RunningVersion
    public var highestAccepted: String?
    /// The signed trust root in force (`root/N.json`); 0 for a root of `--trust` keys.
    public var trustRoot: Int?
    /// What the channel says about the pending or current version (Meteor: why it took a
    /// version that only renames the seed's build); nil when it says nothing.
    public var channelNote: String?
    public var blacklist: [String]
    public var retry: [String]
    public var trial: DeviceState.Trial?
    public var lastCheck: DeviceState.CheckRecord?
    /// Bytes free for clientctl on the root's file system when status ran (`nil` when
    /// unknown): with `lastCheck`, why updates stop on a full disk.
    public var freeBytes: Int64?
    public var installed: [Entry]
    /// The device's fleet reports (`reports/`): `nil` when no report URL is configured.
    public var reports: Reports?
    /// `status --explain`: why the device runs this version and not a newer one, one line
    /// per reason (`nil` unless asked for).
    public var explanation: [String]?
    /// What the device's clocks say and what it decides by (docs/device-time.md#status);
    /// nil for a host that keeps no device time.
    public var clock: ClockStatus?

    /// What the report journal holds and how its last delivery went.
    public struct Reports: Codable, Sendable, Equatable {
        /// Reports recorded and not yet delivered.
        public var pending: Int
        /// Reports dropped to keep the journal bounded or lost to a full disk, in all.
        public var dropped: Int64
        /// Journal lines that could not be read (a torn line after a crash).
        public var unreadable: Int
        /// The last sequence number given out.
        public var lastSeq: Int64
        /// When a delivery was last tried, and why it failed (`nil`: it succeeded).
        public var lastAttempt: Date?
        public var lastFailure: String?
        /// When a delivery last succeeded.
        public var lastDelivered: Date?
        /// The pending reports only say "still here" (heartbeats, rollout waits) and wait
        /// for company until then (docs/fleet-reports.md#delivery); nil when they are due.
        public var heldUntil: Date?

        package init(_ status: ReportJournalStatus) {
            pending = status.pending
            dropped = status.dropped
            unreadable = status.unreadable
            lastSeq = status.lastSeq
            lastAttempt = status.lastAttempt?.time
            lastFailure = status.lastAttempt?.failure
            lastDelivered = status.lastSuccess
            heldUntil = status.heldUntil
        }
    }

    package init(
        layout: RootLayout, config: DeviceConfig, state: DeviceState, installed: [InstalledVersion],
        embedded: InstalledVersion?, selected: InstalledVersion?, lastCheck: DeviceState.CheckRecord?,
        summary: ChannelSummary = ChannelSummary()
    ) {
        root = layout.root
        deviceId = DeviceIdFile.read(layout)?.text
        deviceKey = DeviceKeyFile.readPublic(layout)?.hex
        labels = config.labels.values
        app = config.app
        channelKind = config.channelKind.rawValue
        channel = summary.channel
        rootChannel = summary.rootChannel
        choosableChannels = summary.choosableChannels
        channelChoice = summary.choiceNote
        shellVersion = config.shellVersion.description
        current = RunningVersion(state.current)
        currentSource = summary.currentSource
        embeddedVersion = embedded?.id
        pending = state.pending
        lastKnownGood = state.lastKnownGood
        self.selected = RunningVersion(selected.flatMap { $0.isEmbedded ? nil : $0.id })
        highestAccepted = summary.highestAccepted
        trustRoot = summary.trustRoot
        channelNote = summary.note
        blacklist = state.blacklist
        retry = state.retry
        trial = state.trial
        self.lastCheck = lastCheck
        freeBytes = DiskSpace.free(at: layout.root)
        reports = ReportJournal.forRoot(layout, config: config).map { Reports($0.status) }
        self.installed = installed.map { v in
            Entry(
                version: v.id, path: v.directory, minShell: v.minShell?.description, maxShell: v.maxShell?.description,
                installedAt: v.installedAt, compatible: v.isCompatible(withShell: config.shellVersion),
                blacklisted: state.blacklist.contains(v.id), retry: state.retry.contains(v.id),
                current: v.id == state.current, pending: v.id == state.pending,
                lastKnownGood: v.id == state.lastKnownGood)
        }
    }
}

import ClientFoundation
import DeviceSetup
import Foundation
import Logging

/// The thin orchestrator of a device root: it takes the lock, loads config and state,
/// asks the channel to check, stages what the channel installed, and persists state.
///
/// Logic lives in the pieces it calls (the channel, selection, watchdog, retention,
/// organizer); this type only sequences them. Writes to the root hold its `flock`, so
/// concurrent processes never corrupt a root; an agent's download holds only the check
/// lock (docs/watchdog.md#what-takes-the-gate).
public actor Updater {
    public nonisolated let layout: RootLayout
    public nonisolated let config: DeviceConfig
    package nonisolated let channel: any UpdateChannel
    let now: @Sendable () -> Date
    /// The boot clock (`CLOCK_BOOTTIME` with the boot id), shared by every process of one
    /// boot: a trial started by a one-shot command is timed on it by the next one.
    let bootClock: @Sendable () -> BootInstant
    /// The device's time (the floor, authenticated time), when the engine keeps one: `now`
    /// is its `now()`, a check asks its time servers first, and `status` shows it.
    package nonisolated let clock: DeviceClock?
    /// Where the updater logs what it does (events, below `warning`: failures reach the
    /// host as thrown errors and ``UpdaterEvent/error(message:)``).
    public nonisolated let logger: Logger
    /// Agent state (watchdog, bridge, timer, running check): see Updater+Lifecycle.swift.
    var lifecycle = UpdaterLifecycle()
    /// Where the actor's own code runs: its locked sections write `state.json`, organize
    /// a version at a switch and delete versions by retention synchronously, so they run
    /// on the blocking-work executor's threads, never on the cooperative pool
    /// (docs/concurrency.md).
    private nonisolated let serialExecutor = BlockingSerialExecutor()
    /// The actor's executor: a `BlockingSerialExecutor` on the shared `BlockingExecutor`
    /// (docs/concurrency.md).
    public nonisolated var unownedExecutor: UnownedSerialExecutor { serialExecutor.asUnownedSerialExecutor() }
    /// The subscribers of ``events(bufferingPolicy:)``, fed from any context in order.
    let hub = UpdaterEventHub()
    /// The root's report journal (`reports/`); nil when no report URL is configured, so
    /// nothing is recorded and nothing grows (docs/fleet-reports.md#journal-on-the-device).
    package nonisolated let journal: ReportJournal?

    /// - Parameters:
    ///   - now: the wall clock (injected so tests can control time); ignored when `clock` is given.
    ///   - clock: the device's time (docs/device-time.md); its `now()` decides.
    ///   - bootClock: the boot clock (injected so tests can move it with the wall clock).
    ///   - logger: where the updater logs; swift-log's default handler unless the host
    ///     passes its own.
    package init(
        layout: RootLayout, config: DeviceConfig, channel: any UpdateChannel,
        now: @escaping @Sendable () -> Date = { Date() }, clock: DeviceClock? = nil,
        bootClock: @escaping @Sendable () -> BootInstant = { BootInstant.now() }, logger: Logger = Logger(label: "clientctl.engine")
    ) {
        self.bootClock = bootClock
        self.layout = layout
        self.config = config
        self.channel = channel
        let now = clock.map { clock in { @Sendable in clock.now() } } ?? now
        self.now = now
        self.clock = clock
        self.logger = logger
        self.journal = ReportJournal.forRoot(layout, config: config, now: now)
    }

    /// One full update check: lock → check the feed → download/verify/store → stage the
    /// new version as pending → persist state. The check of `clientctl install`: it holds
    /// the root's `flock` for its whole run (and the check lock, `CheckLock`); an agent's
    /// ``checkForUpdates(lockWait:)`` runs the same steps with the locks taken only to read
    /// and to write.
    ///
    /// When the feed brings nothing new and nothing is pending, an installed version that
    /// the seed rule prefers to the current one is staged again: a version on the retry
    /// list after a failed trial gets its second trial (result `staged`).
    ///
    /// Install notes and download progress go out on ``events(bufferingPolicy:)`` as they happen.
    /// On any failure `state.json` is left byte-identical; the failure is recorded in
    /// `last-check.json` (shown by `status`) and rethrown.
    /// - Parameter lockWait: how long to wait for another process's lock.
    public func install(lockWait: Duration = .seconds(30)) async throws -> InstallReport {
        let checkLock = try await CheckLock.acquire(layout, wait: lockWait)
        let lock = try await FileLock.acquire(path: layout.lock, wait: lockWait)
        defer { withExtendedLifetime((checkLock, lock)) {} }
        let before = try prepareCheckLocked()
        let (outcome, after) = try await runChannelCheck(from: before, lockWait: lockWait)
        return try commitCheckLocked(before: before, after: after, outcome: outcome, organizePending: false).report
    }

    /// A snapshot of the root for `status` and `list`. Takes no lock: it only reads
    /// files that are replaced atomically.
    public func status() throws -> StatusReport {
        let state = try loadState(persist: false)
        let installed = try channel.installedVersions()
        let embedded = try channel.embeddedVersion()
        let selected = channel.select(from: installed, state: state)
        var report = StatusReport(
            layout: layout, config: config, state: state, installed: installed, embedded: embedded,
            selected: selected, lastCheck: LastCheck.read(layout), summary: channel.summary(config: config, state: state))
        report.apply = applyLine(state, now: now())
        report.clock = clock?.status()
        return report
    }

    /// Reads `state.json`; a missing one is a new root, a corrupt one (power loss) is
    /// rebuilt from the complete version folders — never by deleting them.
    /// - Parameter persist: write the rebuilt state back (only with the lock held).
    func loadState(persist: Bool = true) throws -> DeviceState {
        switch StateStore.read(layout) {
        case .loaded(let state):
            return state
        case .missing:
            return DeviceState()
        case .refused(let error):
            throw error
        case .corrupt:
            return try StateRecovery.rebuild(layout: layout, channel: channel, now: now(), persist: persist)
        }
    }
}

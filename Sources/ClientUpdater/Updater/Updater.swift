import Foundation

/// The thin orchestrator of a device root: it takes the lock, loads config and state,
/// asks the channel to check, stages what the channel installed, and persists state.
///
/// Logic lives in the pieces it calls (the channel, selection, watchdog, retention,
/// organizer); this type only sequences them. Mutating operations hold the root's
/// `flock` for their whole duration, so concurrent processes never corrupt a root.
public actor Updater {
    public nonisolated let layout: RootLayout
    public nonisolated let config: DeviceConfig
    public nonisolated let channel: any UpdateChannel
    let now: @Sendable () -> Date
    /// Agent state (watchdog, bridge, timer, events): see Updater+Lifecycle.swift.
    var lifecycle = UpdaterLifecycle()

    /// - Parameters:
    ///   - now: the wall clock (injected so tests can control time).
    public init(
        layout: RootLayout, config: DeviceConfig, channel: any UpdateChannel,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.layout = layout
        self.config = config
        self.channel = channel
        self.now = now
    }

    /// One full update check: lock → check the feed → download/verify/store → stage the
    /// new version as pending → persist state. The one check of the core: `clientctl
    /// install`, `serve`'s timer and the page's `checkForUpdates` all run it.
    ///
    /// When the feed brings nothing new and nothing is pending, an installed version that
    /// the seed rule prefers to the current one is staged again: a version on the retry
    /// list after a failed trial gets its second trial (result `staged`).
    ///
    /// On any failure `state.json` is left byte-identical; the failure is recorded in
    /// `last-check.json` (shown by `status`) and rethrown.
    /// - Parameter lockWait: seconds to wait for another process's lock.
    public func install(lockWait: Double = 30) async throws -> InstallReport {
        let lock = try FileLock(path: layout.lock, wait: lockWait)
        defer { withExtendedLifetime(lock) {} }
        return try await installLocked()
    }

    private func installLocked() async throws -> InstallReport {
        AtomicFile.removeStaleTemporaries(in: layout.root)  // state/last-check writes cut by a crash
        var state = try loadState()
        if try noticeShellUpdate(&state) { try StateStore.save(state, layout) }
        let before = state
        let outcome: CheckOutcome
        do {
            outcome = try await channel.check(state: &state)
        } catch {
            let status = (error as? any ClientctlError)?.kind
            // `no-space`: updates stop until space is freed; status shows why.
            let result = DiskSpace.isNoSpace(error) ? "no-space" : status == .dataError ? "rejected" : "failed"
            try? LastCheck.record(.init(time: now(), result: result, message: "\(error)"), layout)
            throw error
        }
        var report = InstallReport(outcome: outcome)
        if case .installed(let version) = outcome {
            Selection.stage(version.id, in: &state)
        } else if state.pending == nil, let again = try restageCandidate(state) {
            state.pending = again
            report = .staged(again, retry: state.retry.contains(again))
            // What the check said first, when it skipped something (a revocation, say).
            if case .skipped(let why) = outcome { report.message = why + "; " + report.message }
        }
        report.pending = state.pending
        if state != before { try StateStore.save(state, layout) }
        try? LastCheck.record(.init(time: now(), result: report.result, message: report.message), layout)
        return report
    }

    /// The installed version the seed rule prefers to the current one, when it is not
    /// blacklisted (after a failed trial: the version on the retry list).
    private func restageCandidate(_ state: DeviceState) throws -> String? {
        guard let selected = channel.select(from: try storedVersions(), state: state), !selected.isEmbedded,
            selected.id != state.current, !state.blacklist.contains(selected.id)
        else { return nil }
        return selected.id
    }

    /// A snapshot of the root for `status` and `list`. Takes no lock: it only reads
    /// files that are replaced atomically.
    public func status() throws -> StatusReport {
        let state = try loadState(persist: false)
        let installed = try channel.installedVersions()
        let embedded = try channel.embeddedVersion()
        let selected = channel.select(from: installed, state: state)
        return StatusReport(
            layout: layout, config: config, state: state, installed: installed, embedded: embedded,
            selected: selected, lastCheck: LastCheck.read(layout), summary: channel.summary(config: config, state: state))
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

/// What `install` did, as printed by the command (and its `--json` shape).
public struct InstallReport: Codable, Sendable, Equatable {
    /// `installed`, `staged` (an installed version staged again, e.g. for the second
    /// trial of a version on the retry list), `up-to-date`, `no-compatible-release`,
    /// `stale` or `skipped`.
    public var result: String
    /// The version installed, when one was.
    public var version: String?
    /// The version now pending (waits for a reload or the next start).
    public var pending: String?
    public var message: String

    public init(outcome: CheckOutcome) {
        message = outcome.message
        switch outcome {
        case .installed(let v):
            result = "installed"
            version = v.id
        case .upToDate: result = "up-to-date"
        case .noCompatibleRelease: result = "no-compatible-release"
        case .stale: result = "stale"
        case .skipped: result = "skipped"
        }
    }

    /// An installed version staged again by the check; `retry` when a trial of it failed once.
    static func staged(_ id: String, retry: Bool) -> InstallReport {
        var report = InstallReport(outcome: .upToDate(""))
        report.result = "staged"
        report.version = id
        report.message =
            retry
            ? "staged \(id) again: its trial failed once and it gets one more (retry list); it runs after a reload or the next start"
            : "staged \(id), installed earlier: it runs after a reload or the next start"
        return report
    }
}

import ClientFoundation
import Foundation

/// What a lifecycle operation did: the `--json` shape of `reload`, `ack`, `rollback`
/// and `gc`, and what ``Updater/start(bridge:clock:shim:lockWait:)`` returns.
public struct LifecycleReport: Codable, Sendable, Equatable {
    /// The version served now (`"embedded"` in JSON when the embedded seed runs).
    public var current: RunningVersion
    /// The organized folder to load (`serving/<id>`).
    public var servingDirectory: String?
    public var pending: String?
    public var lastKnownGood: String?
    /// The version on trial, if any.
    public var trial: String?
    public var blacklist: [String]
    public var retry: [String]
    /// What the watchdog did, one line each.
    public var events: [String]
    /// Versions deleted by retention.
    public var removed: [String]
    /// The version this operation failed and rolled back, if any.
    public var failed: String?
    /// True when start-up found a new embedded seed and dropped the downloaded versions.
    public var shellUpdateReset: Bool
}

/// A version ready to serve.
struct Served: Sendable {
    var id: String
    var directory: String
}

/// Effects of a transition that happen after the root's lock is released.
struct Followup: Sendable {
    var timer: [WatchdogAction] = []
    var reloadTo: Served?
    var events: [WatchdogEvent] = []
    var removed: [String] = []
    /// When the trial this transition found had started (a commit's report says how long
    /// the page took to acknowledge).
    var trialStartedAt: Date?
}

extension Updater {
    /// Runs one watchdog transition: lock, read state, fail or adopt a stale trial, apply
    /// `body`, persist, organize, retention; then timer, events and bridge.
    func transition(
        lockWait: Duration,
        _ body: (inout Watchdog, inout DeviceState, Set<String>) throws -> [WatchdogAction]
    ) async throws -> LifecycleReport {
        try await exclusively {
            var watchdog = currentWatchdog()
            var followup = Followup()
            let state = try await writerLocked(wait: lockWait) { () -> DeviceState in
                var state = try loadState()
                followup.trialStartedAt = state.trial?.startedAt
                let available = Set(try storedVersions().map(\.id))
                var actions = reconcile(&watchdog, &state, available: available)
                actions += try body(&watchdog, &state, available)
                try performLocked(actions, state: &state, followup: &followup)
                return state
            }
            lifecycle.watchdog = watchdog
            applyTimers(followup)
            defer { announce(followup) }
            if let target = followup.reloadTo { try await point(at: target, reload: true) }
            return report(state, served: followup.reloadTo, followup: followup)
        }
    }

    /// The timer armed for a trial fired.
    func timerFired() async {
        lifecycle.timer = nil
        let clock = lifecycle.clock
        do {
            _ = try await transition(lockWait: .seconds(30)) { watchdog, state, available in
                watchdog.timerFired(state: &state, now: clock.now, available: available)
            }
        } catch {
            emit(.error(message: "startup watchdog: \(error)"))
        }
    }

    /// The watchdog of this process, or a fresh one (one-shot commands).
    func currentWatchdog() -> Watchdog {
        if let watchdog = lifecycle.watchdog { return watchdog }
        var watchdog = Watchdog(timeout: config.startupTimeout)
        watchdog.hasSeed = (try? channel.embeddedVersion()) != nil
        return watchdog
    }

    /// Who owns a trial started now: this process when it runs as an agent, else nobody
    /// (timed on the wall clock).
    func trialOwner() -> TrialOwner {
        lifecycle.attached
            ? .thisProcess(session: lifecycle.session, at: now(), instant: bootClock()) : .detached(at: now(), instant: bootClock())
    }

    /// When this process times no trial, decides about one found in `state.json`.
    func reconcile(_ watchdog: inout Watchdog, _ state: inout DeviceState, available: Set<String>) -> [WatchdogAction] {
        guard watchdog.phase == .idle, let trial = state.trial else { return [] }
        let (wall, instant) = (now(), bootClock())
        let owner = TrialOwner.status(
            of: trial, session: lifecycle.session, now: wall, instant: instant, timeout: config.startupTimeout)
        return watchdog.recover(
            state: &state, now: lifecycle.clock.now, wallClock: wall, instant: instant, owner: owner, available: available)
    }

    /// Performs the actions that touch the root (with the lock held). The version to
    /// reload to is organized before `state.json` is written, so a transition that cannot
    /// be served (nothing to revert to) fails with the root as it was.
    func performLocked(_ actions: [WatchdogAction], state: inout DeviceState, followup: inout Followup) throws {
        for action in actions {
            if case .reload(let target) = action { followup.reloadTo = try organizeForServing(target.installedID) }
        }
        if actions.contains(.persist) {
            channel.servingChanged(state: &state)
            try StateStore.save(state, layout)
        }
        for action in actions {
            switch action {
            case .persist, .reload: break
            case .runRetention:
                // A check running (here or in another process) may have stored a version it
                // has not staged yet: retention waits for the check to commit.
                guard let checkLock = try CheckLock.attempt(layout) else {
                    lifecycle.retentionDeferred = true
                    break
                }
                let removed = try withExtendedLifetime(checkLock) { try runRetention(state: state) }
                followup.removed += removed
                // A deleted version cannot be retried: keep the retry list to installed ones.
                if state.retry.contains(where: removed.contains) {
                    state.retry.removeAll(where: removed.contains)
                    try StateStore.save(state, layout)
                }
            case .armTimer, .cancelTimer: followup.timer.append(action)
            case .report(let event): followup.events.append(event)
            }
        }
    }

    /// Organizes the current version for serving. A version the organizer cannot lay out
    /// (a file name it refuses, a missing file) fails like a crashed trial and the next
    /// candidate is tried, so such a version never stops start-up.
    func organizeOrFail(
        _ watchdog: inout Watchdog, _ state: inout DeviceState, available: Set<String>,
        actions: inout [WatchdogAction]
    ) throws -> Served {
        var unservable: Set<String> = []
        while true {
            do {
                return try organizeForServing(state.current)
            } catch let error as any ClientctlError where UpdaterError.makesVersionUnservable(error) {
                guard let current = state.current, !unservable.contains(current) else { throw error }
                unservable.insert(current)
                emit(.error(message: "\(error.message)"))
                actions += watchdog.cannotOrganize(current, state: &state, available: available.subtracting(unservable))
            }
        }
    }

    /// Timer changes, in order.
    func applyTimers(_ followup: Followup) {
        for action in followup.timer {
            switch action {
            case .armTimer(let deadline): arm(deadline)
            default:
                lifecycle.timer?.cancel()
                lifecycle.timer = nil
            }
        }
    }

    /// Watchdog events, once the host shows their outcome.
    func announce(_ followup: Followup) {
        for event in followup.events {
            emit(.watchdog(event))
            recordWatchdog(event, trialStartedAt: followup.trialStartedAt)
        }
    }

    /// Points the host at `served` (and reloads it); without a bridge only records it.
    func point(at served: Served, reload: Bool) async throws {
        lifecycle.servedDirectory = served.directory
        if let bridge = lifecycle.bridge {
            do {
                try await bridge.setServerBasePath(served.directory)
                if reload { try await bridge.reload() }
            } catch {
                emit(.error(message: "cannot switch the host to \(served.id): \(error)"))
                throw error
            }
        }
        emit(.switched(version: served.id))
    }

    func arm(_ deadline: Duration) {
        lifecycle.timer?.cancel()
        guard lifecycle.attached else { return }  // one-shot commands: the wall clock decides later
        let clock = lifecycle.clock
        lifecycle.timer = Task { [weak self] in
            do { try await clock.sleep(until: deadline) } catch { return }
            guard !Task.isCancelled else { return }
            await self?.timerFired()
        }
    }

    /// Retention for `state` (docs/device-layout.md#retention).
    func runRetention(state: DeviceState) throws -> [String] {
        let plan = Retention.plan(
            installed: try channel.installedVersions(), state: state, keep: config.keep,
            servingEntries: Retention.servingEntries(layout),
            embeddedID: try channel.embeddedVersion()?.id)
        return try Retention.apply(plan, channel: channel, layout: layout)
    }

    /// Organizes `id` (`nil` or the seed's own id = the embedded seed) unless already done.
    func organizeForServing(_ id: String?) throws -> Served {
        let version: InstalledVersion
        if let id, try id != channel.embeddedVersion()?.id {
            guard let found = try storedVersions().first(where: { $0.id == id }) else {
                throw UpdaterError(.notFound, "version \(id) is not installed in \(layout.root)")
            }
            version = found
        } else {
            guard let embedded = try channel.embeddedVersion() else {
                throw UpdaterError(.notFound, "nothing to serve in \(layout.root): no installed version and no embedded seed")
            }
            version = embedded
        }
        let organizer = Organizer(layout: layout, shim: lifecycle.shim)
        if !organizer.isOrganized(id: version.id) {
            try organizer.organize(id: version.id, assets: try channel.servedAssets(for: version))
        }
        guard let directory = organizer.servingDirectory(for: version.id) else {
            throw UpdaterError(.invalidArgument, "version \(version.id) is not a safe folder name")
        }
        return Served(id: version.id, directory: directory)
    }

    /// Installed versions, without the embedded seed.
    func storedVersions() throws -> [InstalledVersion] {
        try channel.installedVersions().filter { !$0.isEmbedded }
    }

    func report(_ state: DeviceState, served: Served?, followup: Followup, reset: Bool = false) -> LifecycleReport {
        var directory = served?.directory
        if directory == nil {
            let id = state.current ?? (try? channel.embeddedVersion())?.id
            directory = id.flatMap { layout.servingDirectory($0) }
        }
        return LifecycleReport(
            current: RunningVersion(state.current), servingDirectory: directory, pending: state.pending,
            lastKnownGood: state.lastKnownGood, trial: state.trial?.version, blacklist: state.blacklist,
            retry: state.retry, events: followup.events.map(\.message), removed: followup.removed,
            failed: followup.events.compactMap { event -> String? in
                if case .failed(let version, _, _, _) = event { return version }
                return nil
            }.first,
            shellUpdateReset: reset)
    }
}

import ClientFoundation
import ClientShim
import Foundation

/// An update check, in three steps of which only the first and the last take the gate
/// (docs/watchdog.md#what-takes-the-gate): read `state.json`; download, verify, unpack
/// and organize with neither the gate nor the root's `flock` (the channel writes only
/// into its own store folders and staging); then apply what the check changed to the
/// state as it is *then* and stage the new version. A trial's timeout, an
/// acknowledgement or a switch that arrives meanwhile runs at once.
extension Updater {
    /// Checks the feed now: the same rules and report as ``install(lockWait:)`` (the
    /// retry restaging included), then the pending version is organized (so the switch is
    /// a pointer flip) and announced as `updateAvailable`. Failures are announced as
    /// `error` and rethrown; `state.json` stays as it was.
    ///
    /// A check already running in this updater is joined, not queued: every caller gets
    /// its report (and the feed is asked once).
    @discardableResult
    public func checkForUpdates(lockWait: Duration = .seconds(30)) async throws -> InstallReport {
        if let running = lifecycle.runningCheck {
            lifecycle.checkJoiners += 1
            defer { lifecycle.checkJoiners -= 1 }
            return try await running.value
        }
        let task = Task { [self] in
            defer { lifecycle.runningCheck = nil }
            return try await checkBesideTheGate(lockWait: lockWait)
        }
        lifecycle.runningCheck = task
        return try await task.value
    }

    private func checkBesideTheGate(lockWait: Duration) async throws -> InstallReport {
        let commit: CheckCommit
        do {
            let checkLock = try await CheckLock.acquire(layout, wait: lockWait)
            let before = try await exclusively { try await locked(wait: lockWait) { try prepareCheckLocked() } }
            let (outcome, after) = try await runChannelCheck(from: before, lockWait: lockWait)
            if case .installed(let version) = outcome, !version.isEmbedded {
                // Laid out before the gate is taken; a failure is met again (and reported) below.
                try? await organizeBesideTheGate(version, shim: lifecycle.shim)
            }
            commit = try await exclusively {
                try await locked(wait: lockWait) {
                    try commitCheckLocked(before: before, after: after, outcome: outcome, organizePending: true)
                }
            }
            withExtendedLifetime(checkLock) {}
        } catch {
            emit(.error(message: "\(error)"))
            throw error
        }
        if let pending = commit.newPending { emit(.updateAvailable(version: pending)) }
        if lifecycle.attached { try await leaveRevokedCurrent(lockWait: lockWait) }
        return commit.report
    }

    /// What a committed check returns: its report, and the version it made pending.
    struct CheckCommit: Sendable {
        var report: InstallReport
        var newPending: String?
    }

    /// The first step, with the gate and the `flock` held: temporaries of writes cut by a
    /// crash go, a shell update resets the root, and the state the check starts from is read.
    func prepareCheckLocked() throws -> DeviceState {
        AtomicFile.removeStaleTemporaries(in: layout.root)  // state/last-check writes cut by a crash
        var state = try loadState()
        if try noticeShellUpdate(&state) { try StateStore.save(state, layout) }
        return state
    }

    /// The channel's check, on no actor: its notes and download progress go out on the
    /// event stream as they happen, in order. A failure is recorded in `last-check.json`
    /// (shown by `status`) and rethrown.
    nonisolated func runChannelCheck(from before: DeviceState, lockWait: Duration) async throws -> (CheckOutcome, DeviceState) {
        var state = before
        // What the channel reported of this check (docs/fleet-reports.md#report-types).
        let memory = CheckReportMemory()
        // The time servers first (bounded), so that the check decides by authenticated time.
        if let clock { await clock.authenticate() }
        defer { recordClockVerdict() }
        do {
            // Through `emit`, like every event: the stream and the host's logger hear it.
            let reporter = CheckReporter(
                note: { [self] in emit(.installNote($0)) },
                progress: { [self] in emit(.downloadProgress(version: $0, completed: $1, total: $2)) },
                report: checkReportReceiver(memory))
            let outcome = try await channel.check(state: &state, reporter: reporter)
            // The signed times it verified raise the floor (docs/device-time.md#the-floor).
            clock?.settle(kept: true)
            recordCheckOutcome(outcome, channelReported: memory.value.withLock { $0.reported })
            return (outcome, state)
        } catch {
            clock?.settle(kept: false)
            recordCheckFailure(error, found: memory.value.withLock { $0.found })
            let status = (error as? any ClientctlError)?.kind
            // `no-space`: updates stop until space is freed; status shows why.
            let result = DiskSpace.isNoSpace(error) ? "no-space" : status == .dataError ? "rejected" : "failed"
            try? LastCheck.record(.init(time: now(), result: result, message: "\(error)"), layout)
            throw error
        }
    }

    /// Organizes a version just stored, on no actor and on the ``BlockingExecutor`` (a big
    /// version takes a while).
    nonisolated func organizeBesideTheGate(_ version: InstalledVersion, shim: Shim) async throws {
        let (layout, channel) = (layout, channel)
        try await BlockingExecutor.run {
            let organizer = Organizer(layout: layout, shim: shim)
            if !organizer.isOrganized(id: version.id) {
                try organizer.organize(id: version.id, assets: try channel.servedAssets(for: version))
            }
        }
    }

    /// The last step, with the gate and the `flock` held: reads `state.json` again (a
    /// switch, a rollback or an acknowledgement may have run meanwhile), applies what the
    /// check changed, stages the new version (or restages one on the retry list) and
    /// writes it all at once; retention put off while the check ran runs now.
    func commitCheckLocked(
        before: DeviceState, after: DeviceState, outcome: CheckOutcome, organizePending: Bool
    ) throws -> CheckCommit {
        let read = try loadState()
        var state = read
        Self.apply(check: before, after, to: &state, channel: channel)
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
        if state.pending != read.pending { state.pendingSince = state.pending == nil ? nil : now() }
        if state != read { try StateStore.save(state, layout) }
        try? LastCheck.record(.init(time: now(), result: report.result.rawValue, message: report.message), layout)
        if lifecycle.retentionDeferred {
            lifecycle.retentionDeferred = false
            let removed = try runRetention(state: state)
            if state.retry.contains(where: removed.contains) {
                state.retry.removeAll(where: removed.contains)
                try StateStore.save(state, layout)
            }
        }
        if organizePending, let pending = state.pending { _ = try organizeForServing(pending) }
        return CheckCommit(report: report, newPending: state.pending != read.pending ? state.pending : nil)
    }

    /// Applies to `state` what a check changed from `before` to `after`: the channel's
    /// memory (then re-derived from the version served when a switch ran meanwhile),
    /// versions it blacklisted (revocations) and took off the retry list. A blacklisted
    /// version is then neither pending, last known good nor on the retry list. The core's
    /// other fields belong to the watchdog and are kept as `state` has them.
    static func apply(check before: DeviceState, _ after: DeviceState, to state: inout DeviceState, channel: any UpdateChannel) {
        if after.channelMemory != before.channelMemory {
            state.channelMemory = after.channelMemory
            if state.current != before.current { channel.servingChanged(state: &state) }
        }
        for version in after.blacklist where !before.blacklist.contains(version) && !state.blacklist.contains(version) {
            state.blacklist.append(version)
        }
        for version in before.retry where !after.retry.contains(version) { state.retry.removeAll { $0 == version } }
        let blacklist = state.blacklist
        state.retry.removeAll { blacklist.contains($0) }
        if let pending = state.pending, state.blacklist.contains(pending) { state.pending = nil }
        if let good = state.lastKnownGood, state.blacklist.contains(good) { state.lastKnownGood = nil }
    }

    /// The installed version the seed rule prefers to the current one, when it is not
    /// blacklisted (after a failed trial: the version on the retry list).
    func restageCandidate(_ state: DeviceState) throws -> String? {
        guard let selected = channel.select(from: try storedVersions(), state: state), !selected.isEmbedded,
            selected.id != state.current, !state.blacklist.contains(selected.id)
        else { return nil }
        return selected.id
    }
}

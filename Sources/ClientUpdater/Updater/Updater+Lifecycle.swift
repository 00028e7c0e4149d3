import ClientFoundation
import ClientShim
import FleetReports
import Foundation

/// The library API a host embeds (it mirrors the Cordova/Capacitor plugin): start-up,
/// `checkForUpdates`, `startupDidComplete`, `reload` (switch to pending), rollback,
/// retention, and an event stream.
///
/// ```swift
/// let updater = Updater(layout: layout, config: config, channel: channel)
/// try await updater.start(bridge: myWebView)          // selects, organizes, calls the bridge
/// for await event in updater.events() { … }     // updateAvailable, error, progress
/// try await updater.startupDidComplete()              // from the page, once it runs
/// ```
///
/// Every switch, trial, acknowledgement and rollback runs alone (a FIFO gate inside the
/// actor) with the root's lock held while it reads and writes the root, so bridge calls
/// are serialized and a switch never races another switch, a timeout or an
/// acknowledgement. A check downloads beside the gate and takes it only to read and to
/// stage (docs/watchdog.md#what-takes-the-gate).
extension Updater {
    /// Start-up: finishes interrupted deletions, resets after a shell update, fails a
    /// trial left by a dead process, selects the version to run (pending first, else the
    /// channel's seed rule), organizes it, starts a trial when it is not the last known
    /// good version, and points the bridge at it.
    ///
    /// - Parameters:
    ///   - bridge: the host; `nil` to only prepare the root.
    ///   - clock: the watchdog's monotonic clock (a manual clock in tests).
    ///   - shim: the WebAppLocalServer shim injected into organized pages.
    ///   - lockWait: how long to wait for the root's lock (at most 5 s for the agent lock).
    /// - Throws: ``UpdaterError`` `.locked` when another live process runs a trial on
    ///   this root, `.notFound` when there is nothing to serve.
    @discardableResult
    public func start(
        bridge: (any HostBridge)?, clock: MonotonicClock = .continuous, shim: Shim = Shim(),
        lockWait: Duration = .seconds(30)
    ) async throws -> LifecycleReport {
        try await exclusively {
            // Held from here to shutdown; released at once if start-up fails.
            let agentLock: FileLock
            if let held = lifecycle.agentLock {
                agentLock = held
            } else {
                agentLock = try await AgentLock.acquireForAgent(layout, wait: min(lockWait, .seconds(5)))
            }
            lifecycle.attached = true
            lifecycle.bridge = bridge
            lifecycle.clock = clock
            lifecycle.shim = shim
            var watchdog = Watchdog(timeout: config.startupTimeout)
            watchdog.hasSeed = (try channel.embeddedVersion()) != nil
            var followup = Followup()
            var reset = false
            let plan = { (keepServing: Bool) async throws -> (DeviceState, Served) in
                watchdog = Watchdog(timeout: self.config.startupTimeout)
                watchdog.hasSeed = (try self.channel.embeddedVersion()) != nil
                followup = Followup()
                return try await self.locked(wait: lockWait) {
                    try self.startLocked(watchdog: &watchdog, followup: &followup, reset: &reset, clock: clock, keepServing: keepServing)
                }
            }
            let (state, served): (DeviceState, Served)
            do {
                (state, served) = try await plan(false)
            } catch let error where DiskSpace.isNoSpace(error) {
                // The disk is full and start-up had something to record (a pending version's
                // trial): serve what runs instead, which records nothing; the pending
                // version waits for a start with free space.
                (state, served) = try await plan(true)
                emit(
                    .error(
                        message:
                            "the disk is full (\(error)): kept serving \(served.id); \(state.pending ?? "the pending version") runs after a start with free space"
                    ))
            }
            lifecycle.agentLock = agentLock
            lifecycle.watchdog = watchdog
            applyTimers(followup)
            defer { announce(followup) }
            try await point(at: served, reload: false)
            if bridge != nil { recordReport(ReportDraft(.start, running: served.id)) }
            return report(state, served: served, followup: followup, reset: reset)
        }
    }

    /// When the check put the running version on the blacklist (its channel revoked it),
    /// switch to the newest good version (else the seed) and reload open pages.
    func leaveRevokedCurrent(lockWait: Duration) async throws {
        guard let current = StateStore.load(layout).current, StateStore.load(layout).blacklist.contains(current) else { return }
        let clock = lifecycle.clock
        _ = try await transition(lockWait: lockWait) { watchdog, state, available in
            guard let current = state.current, state.blacklist.contains(current) else { return [] }
            let candidates = try storedVersions().filter { available.contains($0.id) }
            let chosen = channel.select(from: candidates, state: state)
            let target = chosen.flatMap { $0.isEmbedded ? nil : $0.id }
            return watchdog.leave(revoked: current, for: target, state: &state, now: clock.now, trial: trialOwner())
        }
    }

    /// Switches to the pending version (Cordova `switchToPendingVersion`): a pointer flip
    /// to its organized folder, a trial, then the bridge reloads.
    /// - Parameters:
    ///   - pageVersion: the version of the page asking (`nil`: not said); a page of
    ///     another version than the one served is refused.
    ///   - lockWait: how long to wait for the root's lock.
    /// - Throws: ``UpdaterError`` `.notFound` when no version is pending, `.conflict`
    ///   when `pageVersion` is not the version served.
    @discardableResult
    public func reload(from pageVersion: String? = nil, lockWait: Duration = .seconds(30)) async throws -> LifecycleReport {
        try await switchToPending(from: pageVersion, expected: nil, trigger: "asked", reload: true, lockWait: lockWait)
    }

    /// ``reload(from:lockWait:)`` for `trigger` (a `switched` report's `detail`), refused
    /// with `.conflict` when `expected` is given and is not the pending version.
    func switchToPending(
        from pageVersion: String?, expected: String?, trigger: String, reload: Bool, lockWait: Duration
    ) async throws -> LifecycleReport {
        try await exclusively {
            var watchdog = currentWatchdog()
            var followup = Followup()
            var switchedReport: ReportDraft?
            let (state, served) = try await writerLocked(wait: lockWait) { () -> (DeviceState, Served) in
                var state = try loadState()
                let embeddedID = try channel.embeddedVersion()?.id
                if let pageVersion, let served = state.current ?? embeddedID, pageVersion != served {
                    throw UpdaterError(
                        .conflict, "switch to the pending version refused: the page runs \(pageVersion) but \(served) is served (reload the page)")
                }
                if let expected, state.pending != expected {
                    throw UpdaterError(.conflict, "\(expected) is no longer the pending version (\(state.pending ?? "none") is)")
                }
                let available = Set(try storedVersions().map(\.id))
                var actions = reconcile(&watchdog, &state, available: available)
                guard let pending = state.pending, available.contains(pending) || pending == embeddedID,
                    !state.blacklist.contains(pending)
                else {
                    if !actions.isEmpty { try performLocked(actions, state: &state, followup: &followup) }
                    lifecycle.watchdog = watchdog
                    throw UpdaterError(.notFound, "no pending version to switch to (\(state.current ?? "the embedded seed") runs)")
                }
                let served = try organizeForServing(pending)
                var switched = ReportDraft(.switched, running: pending, version: pending, detail: trigger)
                switched.from = state.current ?? embeddedID
                if let since = state.pendingSince { switched.ms = Int64(max(0, now().timeIntervalSince(since)) * 1000) }
                switchedReport = switched
                // Back to the shell's own version (Meteor scenario 36–41): the seed needs no trial.
                let target = pending == embeddedID ? nil : pending
                if target == nil { state.pending = nil }
                actions += watchdog.activate(target, state: &state, now: lifecycle.clock.now, trial: trialOwner())
                try performLocked(
                    actions.filter { !$0.isReload },
                    state: &state, followup: &followup)
                return (state, served)
            }
            lifecycle.watchdog = watchdog
            applyTimers(followup)
            if let switchedReport { recordReport(switchedReport) }
            defer { announce(followup) }
            try await point(at: served, reload: reload)
            return report(state, served: served, followup: followup)
        }
    }

    /// The page finished starting (Cordova `startupDidComplete`): commits the trial of
    /// the current version and runs retention. The arrival time counts, not the time
    /// the gate lets it through.
    /// - Parameters:
    ///   - version: the version the page was served with (`clientctl ack --version`);
    ///     `nil` acknowledges whatever is current.
    ///   - lockWait: how long to wait for the root's lock.
    /// - Throws: ``UpdaterError`` `.conflict` when `version` is not the version on trial
    ///   (the trial goes on, nothing is written).
    @discardableResult
    public func startupDidComplete(version: String? = nil, lockWait: Duration = .seconds(30)) async throws -> LifecycleReport {
        let arrival = lifecycle.clock.now
        return try await transition(lockWait: lockWait) { watchdog, state, available in
            let actions = watchdog.startupDidComplete(version: version, state: &state, now: arrival, available: available)
            if case .report(let event) = actions.first, case .refused = event {
                throw UpdaterError(.conflict, event.message)
            }
            return actions
        }
    }

    /// The host's page of `version` died before it reported startup complete (the web
    /// view's process crashed, ran out of memory or was killed): when `version` is on
    /// trial, the trial fails now, as a silent one does at its timeout, and the bridge
    /// reloads onto the version reverted to. Any other version (committed, the seed, an old
    /// page) is left alone: the report's `failed` is `nil` and the host reloads its page.
    /// - Parameters:
    ///   - version: the version the page that died was served with.
    ///   - lockWait: how long to wait for the root's lock.
    @discardableResult
    public func pageCrashed(version: String, lockWait: Duration = .seconds(30)) async throws -> LifecycleReport {
        let arrival = lifecycle.clock.now
        return try await transition(lockWait: lockWait) { watchdog, state, available in
            watchdog.pageCrashed(version: version, state: &state, now: arrival, available: available)
        }
    }

    /// Rolls back to the last known good version (else the embedded seed), blacklisting
    /// the current one.
    /// - Throws: ``UpdaterError`` `.notFound` when there is neither (the root is left as it was).
    @discardableResult
    public func rollback(lockWait: Duration = .seconds(30)) async throws -> LifecycleReport {
        try await transition(lockWait: lockWait) { watchdog, state, available in
            guard watchdog.canRollBack(state: state, available: available) else {
                throw UpdaterError(
                    .notFound,
                    "nothing to roll back to: \(state.current ?? "the embedded seed") runs and there is no other last known good version and no embedded seed"
                )
            }
            return watchdog.rollback(state: &state, available: available)
        }
    }

    /// Rolls `version` back as ``rollback(lockWait:)`` does, for `reason`, when it is still
    /// the current version; returns nil, and does nothing, when another version runs now.
    /// A committed version goes back to the newest installed version below it (SemVer) that
    /// is not blacklisted, else to the embedded seed, like a failed trial.
    /// - Throws: ``UpdaterError`` `.notFound` when there is nothing to roll back to.
    @discardableResult
    package func rollback(ifCurrent version: String, reason: FailureReason, lockWait: Duration = .seconds(30)) async throws -> LifecycleReport? {
        var skipped = false
        let report = try await transition(lockWait: lockWait) { watchdog, state, available in
            guard state.current == version else {
                skipped = true
                return []
            }
            // A committed version is its own last known good: go back to the newest other
            // installed version below it that is not blacklisted, as its trial would have.
            if state.lastKnownGood == version, let mine = Version(version) {
                let earlier = available.compactMap { id -> Version? in
                    guard id != version, !state.blacklist.contains(id), let v = Version(id), v < mine else { return nil }
                    return v
                }
                if let previous = earlier.max() { state.lastKnownGood = previous.description }
            }
            guard watchdog.canRollBack(state: state, available: available) else {
                throw UpdaterError(.notFound, "nothing to roll back \(version) to: there is no other last known good version and no embedded seed")
            }
            return watchdog.rollback(state: &state, available: available, reason: reason)
        }
        return skipped ? nil : report
    }

    /// Runs retention now (`clientctl gc`), after finishing interrupted deletions.
    @discardableResult
    public func collectGarbage(lockWait: Duration = .seconds(30)) async throws -> LifecycleReport {
        try await transition(lockWait: lockWait) { _, _, _ in
            try Trash.finishInterrupted(layout)
            return [.runRetention]
        }
    }

    /// Ends the agent: stops the timer, drops an unfinished trial of this process without
    /// counting a failure, and finishes every event stream.
    public func shutdown() async {
        _ = try? await exclusively {
            lifecycle.timer?.cancel()
            lifecycle.timer = nil
            if var watchdog = lifecycle.watchdog {
                try? await locked(wait: .seconds(5)) {
                    var state = try loadState()
                    if watchdog.shutdown(state: &state).contains(.persist) { try StateStore.save(state, layout) }
                }
                lifecycle.watchdog = watchdog
            }
            hub.finishAll()
            lifecycle.attached = false
            if lifecycle.agentLock != nil {
                AgentLock.clear(layout)
                lifecycle.agentLock = nil
            }
        }
    }

    /// Ends every event stream now (after the events already yielded are read), whatever
    /// ``shutdown()`` could do: a host loop that waits for its streams to end never waits
    /// for ever, even when its task was cancelled before the updater shut down.
    package nonisolated func endEvents() { hub.finishAll() }

    /// Records where this agent's `/__clientctl/` endpoints listen (`agent.json`), so a
    /// refused command can say where to go. Call after ``start(bridge:clock:shim:lockWait:)``.
    public func recordControlAddress(_ url: String) {
        guard lifecycle.agentLock != nil else { return }
        AgentLock.record(AgentLock.Holder(pid: getpid(), control: url), layout)
    }

    /// A new stream of everything that happens from now on, in the order it happens:
    /// switches, watchdog events, errors, `updateAvailable`, and while a check runs its
    /// install notes and download progress. Streams end at ``shutdown()``.
    /// - Parameter bufferingPolicy: what a slow reader loses (by default the oldest
    ///   beyond 256 unread events; `.unbounded` to lose nothing).
    public nonisolated func events(
        bufferingPolicy: AsyncStream<UpdaterEvent>.Continuation.BufferingPolicy = .bufferingNewest(256)
    ) -> AsyncStream<UpdaterEvent> {
        hub.subscribe(bufferingPolicy: bufferingPolicy)
    }

    /// True when a version is pending (``reload(from:lockWait:)`` would switch to it).
    public var isUpdateAvailable: Bool { StateStore.load(layout).pending != nil }

    /// The version served now: `state.json`'s current, else the embedded seed's id.
    public var currentVersion: String? { currentVersion(in: StateStore.load(layout)) }

    /// The version `state` serves: its current, else the embedded seed's id.
    package nonisolated func currentVersion(in state: DeviceState) -> String? {
        state.current ?? (try? channel.embeddedVersion())?.id
    }

    /// The folder handed to the bridge last.
    public var servingDirectory: String? { lifecycle.servedDirectory }
}

import ClientFoundation
import Foundation

/// The startup watchdog (docs/watchdog.md#the-state-machine) as a pure state machine.
///
/// Activating a version that is not `lastKnownGood` starts a *trial*, persisted in
/// ``DeviceState/trial``. ``startupDidComplete(state:now:)`` commits it;
/// the timer firing at the deadline, ``pageCrashed(version:state:now:available:)``, or
/// ``recover(state:now:wallClock:instant:owner:available:)`` finding a trial whose process died,
/// fails it: the first failure puts the version on
/// the retry list, a second blacklists it, and the device reverts to `lastKnownGood`,
/// else the embedded seed.
///
/// The machine never touches a clock, a file or the web view. Every transition takes the
/// current time as a monotonic ``Duration`` (from a ``MonotonicClock``), edits the state it
/// is given, and returns the ``WatchdogAction``s the driver must perform, in order.
/// `state.json` is the truth: every transition first reconciles with the state passed
/// in, so a trial resolved by another process (`clientctl ack`) is never failed here.
package struct Watchdog: Sendable, Equatable {
    /// What this process's watchdog is doing.
    package enum Phase: Sendable, Equatable {
        /// No trial is being timed by this process.
        case idle
        /// `version` is on trial and fails at `deadline` (monotonic time).
        case trial(version: String, deadline: Duration)
    }

    /// The current phase.
    package private(set) var phase: Phase = .idle
    /// How long a version has to call `startupDidComplete`.
    package let timeout: Duration
    /// Whether an embedded seed exists to revert to. Without one (and without a last
    /// known good version) a failed version keeps running, recorded on the retry list or
    /// the blacklist as usual: a device never ends up with nothing to serve.
    package var hasSeed = true

    /// - Parameter timeout: the startup timeout (`DeviceConfig.startupTimeout`, its `startupTimeoutSeconds`).
    package init(timeout: Duration) {
        self.timeout = timeout
    }

    /// Makes `version` current (`nil` = the embedded seed) and starts a trial unless it is
    /// the last known good version or the seed.
    ///
    /// - Parameters:
    ///   - trial: who runs the trial and since when (wall clock), persisted for crash detection.
    package mutating func activate(
        _ version: String?, state: inout DeviceState, now: Duration,
        trial: TrialOwner
    ) -> [WatchdogAction] {
        let wasTiming = phase != .idle
        state.current = version
        if state.pending == version { state.pending = nil }
        guard let version, version != state.lastKnownGood else {
            state.trial = nil
            phase = .idle
            return (wasTiming ? [.cancelTimer] : []) + [.persist]
        }
        state.trial = DeviceState.Trial(version: version, owner: trial)
        let deadline = now + timeout
        phase = .trial(version: version, deadline: deadline)
        return [.persist, .armTimer(deadline: deadline), .report(.trialStarted(version: version))]
    }

    /// The page finished starting. Commits the trial of the current version
    /// (`lastKnownGood = current`, off the retry list) and asks for retention.
    ///
    /// An acknowledgement at or after the deadline is too late: it fails the trial, so
    /// the outcome never depends on whether the timer task ran first.
    ///
    /// - Parameter version: the version the acknowledging page was served with (`nil`
    ///   when it does not say). One that is not on trial is refused
    ///   (``WatchdogEvent/refused(acknowledged:onTrial:)``) and changes nothing: a page of
    ///   an older version never commits the version on trial.
    package mutating func startupDidComplete(
        version: String? = nil, state: inout DeviceState, now: Duration,
        available: Set<String>
    ) -> [WatchdogAction] {
        if let version, let trial = state.trial, trial.version == state.current, version != trial.version {
            return [.report(.refused(acknowledged: version, onTrial: trial.version))]
        }
        guard let trial = state.trial, trial.version == state.current else {
            let wasTiming = phase != .idle
            phase = .idle
            let timer: [WatchdogAction] = wasTiming ? [.cancelTimer] : []
            // The seed started (after a switch back to it): it is the last known good
            // version now, and retention may drop the downloads it replaced.
            if state.current == nil, state.trial == nil, hasSeed {
                state.lastKnownGood = nil
                return timer + [.persist, .runRetention, .report(.noTrial(current: .embedded))]
            }
            return timer + [.report(.noTrial(current: RunningVersion(state.current)))]
        }
        if case .trial(let version, let deadline) = phase, version == trial.version, now >= deadline {
            return fail(trial.version, reason: .timedOut, state: &state, available: available)
        }
        state.lastKnownGood = trial.version
        state.trial = nil
        state.retry.removeAll { $0 == trial.version }
        let wasTiming = phase != .idle
        phase = .idle
        return (wasTiming ? [.cancelTimer] : []) + [.persist, .runRetention, .report(.committed(version: trial.version))]
    }

    /// The timer armed by an ``WatchdogAction/armTimer(deadline:)`` fired.
    package mutating func timerFired(state: inout DeviceState, now: Duration, available: Set<String>) -> [WatchdogAction] {
        guard case .trial(let version, let deadline) = phase else { return [] }
        guard state.trial?.version == version, state.current == version else {
            phase = .idle  // resolved elsewhere (another process acknowledged or rolled back)
            return []
        }
        guard now >= deadline else { return [.armTimer(deadline: deadline)] }
        return fail(version, reason: .timedOut, state: &state, available: available)
    }

    /// The host's page of `version` died before it reported startup complete (its web
    /// process crashed, ran out of memory or was killed): the trial of `version` fails now
    /// (``FailureReason/pageCrashed``) instead of at its deadline, by the same rule as a
    /// timeout (retry list, then blacklist; revert and reload). At or after the deadline it
    /// is a timeout, as a late acknowledgement is. A page of a version that is not on trial
    /// here (committed already, the seed, an old page) changes nothing: the host reloads it.
    package mutating func pageCrashed(version: String, state: inout DeviceState, now: Duration, available: Set<String>)
        -> [WatchdogAction]
    {
        guard case .trial(let onTrial, let deadline) = phase, onTrial == version else { return [] }
        guard state.trial?.version == version, state.current == version else {
            phase = .idle  // resolved elsewhere (another process acknowledged or rolled back)
            return []
        }
        return fail(version, reason: now >= deadline ? .timedOut : .pageCrashed, state: &state, available: available)
    }

    /// Start-up (or any command run on the root): decides what to do with a trial found
    /// in `state.json`.
    ///
    /// - A trial whose process is gone failed (``FailureReason/processDied``).
    /// - A trial without a process (started by `clientctl reload`) fails once its
    ///   deadline has passed, measured on the boot clock (`instant`, `CLOCK_BOOTTIME`)
    ///   from its start within the same boot, on the wall clock only across a reboot or
    ///   for a trial recorded before the boot clock was kept; before that it is adopted
    ///   with the time that remains.
    /// - A trial of another live process is left alone.
    package mutating func recover(
        state: inout DeviceState, now: Duration, wallClock: Date, instant: BootInstant,
        owner: TrialOwnerStatus, available: Set<String>
    ) -> [WatchdogAction] {
        guard let trial = state.trial else {
            phase = .idle
            return []
        }
        guard trial.version == state.current else {
            // A trial of a version that is not current is meaningless: drop it.
            state.trial = nil
            phase = .idle
            return [.persist]
        }
        switch owner {
        case .otherProcess:
            phase = .idle
            return []
        case .gone:
            return fail(trial.version, reason: .processDied, state: &state, available: available)
        case .thisProcess, .none:
            let elapsed = trial.elapsed(at: instant, wallClock: wallClock)
            guard elapsed < timeout else {
                return fail(trial.version, reason: .timedOut, state: &state, available: available)
            }
            let deadline = now + (timeout - elapsed)
            phase = .trial(version: trial.version, deadline: deadline)
            return [.armTimer(deadline: deadline)]
        }
    }

    /// The version `version` (the current one) cannot be organized for serving: it fails
    /// like a crashed trial (retry list, then blacklist) and the device reverts.
    package mutating func cannotOrganize(_ version: String, state: inout DeviceState, available: Set<String>) -> [WatchdogAction] {
        fail(version, reason: .cannotOrganize, state: &state, available: available.subtracting([version]))
    }

    /// True when ``rollback(state:available:)`` has a version (or the seed) to go back to.
    package func canRollBack(state: DeviceState, available: Set<String>) -> Bool {
        guard let current = state.current else { return true }
        if hasSeed { return true }
        return state.lastKnownGood.map { $0 != current && available.contains($0) } ?? false
    }

    /// A manual rollback (`clientctl rollback`): blacklists the current version at once
    /// and reverts to `lastKnownGood`, else the embedded seed. When the current version
    /// is the last known good one, that mark is dropped and the device reverts to the seed.
    package mutating func rollback(state: inout DeviceState, available: Set<String>, reason: FailureReason = .rolledBack) -> [WatchdogAction] {
        guard let current = state.current else {
            return [.report(.nothingToRollBack)]
        }
        if state.lastKnownGood == current { state.lastKnownGood = nil }
        state.retry.removeAll { $0 == current }
        if !state.blacklist.contains(current) { state.blacklist.append(current) }
        return revert(failed: current, reason: reason, blacklisted: true, state: &state, available: available)
    }

    /// The channel revoked the current version (it is on the blacklist now): the device
    /// switches to `target` — the newest good version by the seed rule, `nil` for the seed —
    /// with a trial unless it is the last known good version, and open pages reload. With
    /// neither another version nor a seed the revoked version keeps running (never a blank
    /// screen) and nothing is done.
    package mutating func leave(revoked version: String, for target: String?, state: inout DeviceState, now: Duration, trial: TrialOwner)
        -> [WatchdogAction]
    {
        guard state.current == version, target != nil || hasSeed else { return [] }
        if state.lastKnownGood == version { state.lastKnownGood = nil }
        var actions = activate(target, state: &state, now: now, trial: trial)
        actions.append(.reload(to: RunningVersion(target)))
        actions.append(.report(.revoked(version: version, switchedTo: RunningVersion(target))))
        return actions
    }

    /// Graceful shutdown in the middle of a trial: the trial is dropped without counting
    /// a failure (the version stays current and gets a fresh trial at the next start).
    package mutating func shutdown(state: inout DeviceState) -> [WatchdogAction] {
        guard case .trial(let version, _) = phase else { return [] }
        phase = .idle
        guard state.trial?.version == version else { return [.cancelTimer] }
        state.trial = nil
        return [.cancelTimer, .persist]
    }

    /// The failure rule shared by both channels (the Meteor plugin's
    /// `addBlacklistedVersion`): first failure → retry list; second (already on the retry
    /// list or the blacklist) → off the retry list, onto the blacklist.
    /// - Returns: true when the version is now blacklisted.
    package static func recordFailure(of version: String, in state: inout DeviceState) -> Bool {
        if state.retry.contains(version) || state.blacklist.contains(version) {
            state.retry.removeAll { $0 == version }
            if !state.blacklist.contains(version) { state.blacklist.append(version) }
            return true
        }
        state.retry.append(version)
        return false
    }

    private mutating func fail(
        _ version: String, reason: FailureReason, state: inout DeviceState,
        available: Set<String>
    ) -> [WatchdogAction] {
        let blacklisted = Self.recordFailure(of: version, in: &state)
        return revert(failed: version, reason: reason, blacklisted: blacklisted, state: &state, available: available)
    }

    private mutating func revert(
        failed version: String, reason: FailureReason, blacklisted: Bool,
        state: inout DeviceState, available: Set<String>
    ) -> [WatchdogAction] {
        var target: String?
        if let good = state.lastKnownGood, good != version, available.contains(good) { target = good }
        let wasTiming = phase != .idle
        phase = .idle
        state.trial = nil
        if target == nil, !hasSeed, available.contains(version), reason != .rolledBack {
            // Nothing to revert to: keep serving the failed version rather than nothing.
            state.current = version
            if state.pending == version { state.pending = nil }
            return (wasTiming ? [.cancelTimer] : []) + [
                .persist, .report(.failed(version: version, reason: reason, blacklisted: blacklisted, revertedTo: .installed(version))),
            ]
        }
        state.current = target
        if state.pending == target || state.pending == version { state.pending = nil }
        return (wasTiming ? [.cancelTimer] : []) + [
            .persist, .reload(to: RunningVersion(target)),
            .report(.failed(version: version, reason: reason, blacklisted: blacklisted, revertedTo: RunningVersion(target))),
        ]
    }
}

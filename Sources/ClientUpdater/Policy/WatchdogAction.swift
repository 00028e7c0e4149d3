/// Something the driver of a ``Watchdog`` must do, returned by every transition.
///
/// Actions are performed in the order they are returned: `persist` always comes before
/// `reload`, so a crash between the two leaves a state that the next start serves.
import ClientFoundation
package enum WatchdogAction: Sendable, Equatable {
    /// Write the edited ``DeviceState`` to `state.json`.
    case persist
    /// (Re)arm the startup timer to call ``Watchdog/timerFired(state:now:available:)`` at
    /// `deadline` (monotonic time of the driver's ``MonotonicClock``).
    case armTimer(deadline: Duration)
    /// Stop the startup timer.
    case cancelTimer
    /// A version was committed: run retention (docs/device-layout.md#retention).
    case runRetention
    /// Serve `to` and reload the web view.
    case reload(to: RunningVersion)
    /// Tell the host and the log what happened.
    case report(WatchdogEvent)
}

extension WatchdogAction {
    /// True for ``reload(to:)``: the one action a driver performs after the lock is released.
    package var isReload: Bool {
        if case .reload = self { return true }
        return false
    }
}

/// What a watchdog transition decided, for events, logs and command output.
public enum WatchdogEvent: Sendable, Equatable {
    /// `version` went on trial.
    case trialStarted(version: String)
    /// `version` completed start-up and is now `lastKnownGood`.
    case committed(version: String)
    /// `version` failed; it is now on the retry list or (`blacklisted`) the blacklist, and
    /// the device reverted to `revertedTo` (the failed version itself when there was
    /// nothing to revert to: it keeps running rather than a blank screen).
    case failed(version: String, reason: FailureReason, blacklisted: Bool, revertedTo: RunningVersion)
    /// The channel revoked `version` while it ran: the device switched to `switchedTo`.
    case revoked(version: String, switchedTo: RunningVersion)
    /// `startupDidComplete` arrived while nothing was on trial.
    case noTrial(current: RunningVersion)
    /// A rollback was asked for while the embedded seed runs.
    case nothingToRollBack
    /// An acknowledgement named `acknowledged` while `onTrial` is on trial (a page of an
    /// older version, an old tab): refused, the trial goes on.
    case refused(acknowledged: String, onTrial: String)

    /// One line for people.
    public var message: String {
        switch self {
        case .trialStarted(let v): return "\(v) is on trial until it reports startup complete"
        case .committed(let v): return "\(v) completed startup: it is now the last known good version"
        case .failed(let v, let reason, let blacklisted, let target):
            let list = blacklisted ? "blacklisted" : "will be retried once"
            if target == .installed(v) {
                return "\(v) \(reason.message); \(list); it keeps running: no last known good version and no embedded seed to revert to"
            }
            return "\(v) \(reason.message); \(list); reverted to \(target.spoken)"
        case .revoked(let v, let target): return "\(v) was revoked by its channel; switched to \(target.spoken)"
        case .noTrial(let current): return "nothing on trial (\(current.spoken) runs)"
        case .nothingToRollBack: return "the embedded seed runs: nothing to roll back"
        case .refused(let acknowledged, let onTrial):
            return "startup complete of \(acknowledged) refused: \(onTrial) is on trial, not \(acknowledged)"
        }
    }
}

/// Why a trial failed.
public enum FailureReason: String, Sendable, Equatable, Codable {
    /// No `startupDidComplete` before the startup timeout.
    case timedOut = "timed-out"
    /// The process running the trial died (found at the next start).
    case processDied = "process-died"
    /// `clientctl rollback` was run.
    case rolledBack = "rolled-back"
    /// The organizer cannot lay the version out for serving (a file name it refuses).
    case cannotOrganize = "cannot-organize"
    /// The host's page died before it reported startup complete (the web view's process
    /// crashed, ran out of memory or was killed).
    case pageCrashed = "page-crashed"
    /// After its acknowledgement, its page failed on most of its loads within its first
    /// hour of use, and the device allows it to go back on its own (docs/page-errors.md#local-rollback).
    case pageErrors = "page-errors"

    var message: String {
        switch self {
        case .timedOut: return "did not report startup complete before the startup timeout"
        case .processDied: return "was on trial when its process died"
        case .rolledBack: return "was rolled back by hand"
        case .cannotOrganize: return "cannot be organized for serving"
        case .pageCrashed: return "stopped before it reported startup complete: its page's process died"
        case .pageErrors: return "failed on most of its page loads in its first hour of use"
        }
    }
}

import Foundation

/// Who runs a watchdog trial, as persisted in ``DeviceState/Trial``.
public struct TrialOwner: Sendable, Equatable {
    /// When the trial started (wall clock).
    public var startedAt: Date
    /// The process timing the trial; `nil` for a trial started by `clientctl reload`,
    /// which is timed on the wall clock by whichever command runs next.
    public var pid: Int32?
    /// The updater instance timing the trial.
    public var session: String?
    /// The kernel boot id.
    public var boot: String?

    public init(startedAt: Date, pid: Int32?, session: String?, boot: String?) {
        self.startedAt = startedAt
        self.pid = pid
        self.session = session
        self.boot = boot
    }

    /// This process, as the updater instance `session`.
    public static func thisProcess(session: String, at time: Date) -> TrialOwner {
        TrialOwner(startedAt: time, pid: getpid(), session: session, boot: bootID())
    }

    /// No process: a trial timed on the wall clock (`clientctl reload`).
    public static func detached(at time: Date) -> TrialOwner {
        TrialOwner(startedAt: time, pid: nil, session: nil, boot: bootID())
    }

    /// Looks at the system to tell whether `trial`'s process is still alive.
    /// - Parameter session: the caller's updater instance id.
    public static func status(of trial: DeviceState.Trial, session: String) -> TrialOwnerStatus {
        guard let pid = trial.pid else { return .none }
        if trial.session == session { return .thisProcess }
        if let boot = trial.boot, let now = bootID(), boot != now { return .gone }
        if pid == getpid() { return .gone }  // an earlier updater instance of this process
        return isAlive(pid) ? .otherProcess : .gone
    }

    /// True when `pid` names a live (not zombie) process.
    static func isAlive(_ pid: Int32) -> Bool {
        guard pid > 0 else { return false }
        if kill(pid, 0) != 0 && errno != EPERM { return false }
        // A killed child that its parent has not reaped yet is a zombie: dead.
        return !Platform.isZombie(pid)
    }

    /// The kernel boot id, when the system has one (``Platform/bootID()``).
    static func bootID() -> String? { Platform.bootID() }
}

/// What ``TrialOwner/status(of:session:)`` found out about a persisted trial.
public enum TrialOwnerStatus: Sendable, Equatable {
    /// The trial belongs to the caller's own updater instance.
    case thisProcess
    /// Another live process times it: leave it alone.
    case otherProcess
    /// Its process died (crash, SIGKILL, power loss): the trial failed.
    case gone
    /// No process owns it: it is timed on the wall clock.
    case none
}

import ClientFoundation
import Foundation

/// Who runs a watchdog trial, as persisted in ``DeviceState/Trial``.
package struct TrialOwner: Sendable, Equatable {
    /// When the trial started (wall clock).
    package var startedAt: Date
    /// The process timing the trial; `nil` for a trial started by `clientctl reload`,
    /// which is timed by whichever command runs next, on the boot clock.
    package var pid: Int32?
    /// The updater instance timing the trial.
    package var session: String?
    /// The kernel boot id.
    package var boot: String?
    /// When `pid` started (clock ticks after boot), to tell a reused pid from the owner.
    package var pidStart: UInt64?
    /// When the trial started on the boot clock (`CLOCK_BOOTTIME`, within ``boot``).
    package var startedUptime: Duration?

    package init(
        startedAt: Date, pid: Int32?, session: String?, boot: String?, pidStart: UInt64? = nil, startedUptime: Duration? = nil
    ) {
        self.startedAt = startedAt
        self.pid = pid
        self.session = session
        self.boot = boot
        self.pidStart = pidStart
        self.startedUptime = startedUptime
    }

    /// This process, as the updater instance `session`, at device time `time` and boot
    /// clock instant `instant`.
    package static func thisProcess(session: String, at time: Date, instant: BootInstant = .now()) -> TrialOwner {
        TrialOwner(
            startedAt: time, pid: getpid(), session: session, boot: instant.bootID, pidStart: processStart(getpid()),
            startedUptime: instant.uptime)
    }

    /// How long past its deadline a trial of another live process is still believed: its
    /// own timer fails it at the deadline, so a trial found much later has no live owner.
    package static let staleGrace: Duration = .seconds(60)

    /// ``status(of:session:)``, with the deadline honoured: a trial still recorded more than
    /// ``staleGrace`` after its deadline (`startedAt + timeout`) is `.gone`, whoever
    /// holds its pid now.
    package static func status(
        of trial: DeviceState.Trial, session: String, now: Date, instant: BootInstant, timeout: Duration
    ) -> TrialOwnerStatus {
        let found = status(of: trial, session: session)
        guard found == .otherProcess else { return found }
        return trial.elapsed(at: instant, wallClock: now) > timeout + staleGrace ? .gone : found
    }

    /// No process: a trial timed by whichever command runs next (`clientctl reload`), on the
    /// boot clock within this boot.
    package static func detached(at time: Date, instant: BootInstant = .now()) -> TrialOwner {
        TrialOwner(startedAt: time, pid: nil, session: nil, boot: instant.bootID, startedUptime: instant.uptime)
    }

    /// Looks at the system to tell whether `trial`'s process is still alive.
    /// - Parameter session: the caller's updater instance id.
    package static func status(of trial: DeviceState.Trial, session: String) -> TrialOwnerStatus {
        guard let pid = trial.pid else { return .none }
        if trial.session == session { return .thisProcess }
        if let boot = trial.boot, let now = bootID(), boot != now { return .gone }
        if pid == getpid() { return .gone }  // an earlier updater instance of this process
        guard isAlive(pid) else { return .gone }
        // The pid was reused by an unrelated process since the trial started.
        if let recorded = trial.pidStart, let started = processStart(pid), started != recorded { return .gone }
        return .otherProcess
    }

    /// The start time of `pid` in clock ticks after boot (field 22 of `/proc/PID/stat`).
    package static func processStart(_ pid: Int32) -> UInt64? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        // Fields after the command name start at field 3 (state): starttime is the 20th.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 19 ? UInt64(fields[19]) : nil
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
package enum TrialOwnerStatus: Sendable, Equatable {
    /// The trial belongs to the caller's own updater instance.
    case thisProcess
    /// Another live process times it: leave it alone.
    case otherProcess
    /// Its process died (crash, SIGKILL, power loss): the trial failed.
    case gone
    /// No process owns it: it is timed on the wall clock.
    case none
}

import ClientFoundation
import ClientShim
import Foundation

/// The per-process state of an ``Updater`` used as a long-running agent (`serve`, or a
/// host app): the watchdog, the bridge, the timer, the running check, and the gate that
/// runs switches one at a time. Kept in one stored property of the actor.
struct UpdaterLifecycle {
    /// Whether ``Updater/start(bridge:clock:shim:)`` ran: trials then belong to this
    /// process and are timed here; otherwise (one-shot commands) they are timed on the
    /// wall clock and checked by whichever command runs next.
    var attached = false
    var bridge: (any HostBridge)?
    /// The watchdog's monotonic clock, which ``Updater/start(bridge:clock:shim:lockWait:)`` sets.
    var clock: MonotonicClock = .continuous
    var shim = Shim()
    var watchdog: Watchdog?
    /// Identifies this updater instance in persisted trials.
    let session = UUID().uuidString
    var timer: Task<Void, Never>?
    /// The check running now, joined by every ``Updater/checkForUpdates(lockWait:)``
    /// that arrives meanwhile.
    var runningCheck: Task<InstallReport, any Error>?
    /// How many callers wait on ``runningCheck`` beside the one that started it.
    var checkJoiners = 0
    /// Retention was due while a check held the check lock: it runs when the check commits.
    var retentionDeferred = false
    /// The serving folder handed to the bridge last.
    var servedDirectory: String?
    /// `<root>/agent.lock`, held from start-up to shutdown: this process is then the
    /// only writer of the watchdog (see ``AgentLock``).
    var agentLock: FileLock?
    /// FIFO gate: one lifecycle operation at a time, even across suspension points.
    var gateBusy = false
    var gateWaiters: [CheckedContinuation<Void, Never>] = []
}

extension Updater {
    /// Runs `body` alone: operations queue in arrival order, so an acknowledgement that
    /// arrived before the timer fired is handled first, and a bridge call never overlaps
    /// another switch (the actor alone would interleave at every `await`).
    func exclusively<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        if lifecycle.gateBusy {
            await withCheckedContinuation { lifecycle.gateWaiters.append($0) }
        } else {
            lifecycle.gateBusy = true
        }
        defer {
            if lifecycle.gateWaiters.isEmpty {
                lifecycle.gateBusy = false
            } else {
                lifecycle.gateWaiters.removeFirst().resume()  // ownership passes on directly
            }
        }
        return try await body()
    }

    /// Runs `body` with the root's flock held (inside ``exclusively(_:)`` only: two
    /// locks of one process on the same file would wait for each other). The wait for the
    /// lock suspends the actor (``FileLock/acquire(path:wait:clock:)``): no thread sleeps while
    /// another process holds it.
    func locked<T>(wait: Duration = .seconds(30), _ body: () throws -> T) async throws -> T {
        let lock = try await FileLock.acquire(path: layout.lock, wait: wait)
        return try withExtendedLifetime(lock) { try body() }
    }

    /// ``locked(wait:_:)`` for the watchdog's writers (switch, acknowledge, roll back,
    /// retention): a one-shot caller also takes ``AgentLock`` for the duration, so it is
    /// refused while an agent runs on the root; the agent itself already holds it.
    func writerLocked<T>(wait: Duration = .seconds(30), _ body: () throws -> T) async throws -> T {
        if lifecycle.agentLock != nil { return try await locked(wait: wait, body) }
        let agent = try await AgentLock.acquireForCommand(layout)
        let lock = try await FileLock.acquire(path: layout.lock, wait: wait)
        // An agent that started after the check has created its lock file by now.
        let late = agent == nil ? try await AgentLock.acquireForCommand(layout) : nil
        return try withExtendedLifetime((agent, lock, late)) { try body() }
    }

    nonisolated func emit(_ event: UpdaterEvent) {
        logger.log(level: event.logLevel, event.logMessage)
        hub.emit(event)
    }
}

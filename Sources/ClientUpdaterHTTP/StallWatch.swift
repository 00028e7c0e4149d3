import ClientFoundation
import ClientUpdater
import Foundation
import Synchronization

/// Measures how long a transfer has been waiting for the network, to enforce the stall
/// timeout ("no byte for this long"), and how long it has run, for its time limit.
///
/// Only time spent waiting for the server counts: time inside the caller's sink (a slow
/// disk, hashing) does not, so back-pressure never looks like a stalled server.
///
/// Waiting time is counted by the watch's own ticks, and one tick counts at most
/// ``maxTickCredit``: when the whole process was starved of CPU (a busy device, a loaded
/// test machine), the task that would have received the waiting bytes was starved too, so
/// one late tick must not turn the starvation into a stall. A real stall still ends the
/// transfer after the idle timeout, over several ticks. The decisions are pure functions
/// of the clock readings passed in (``tick(now:)``, ``isOverTime(now:)``); ``watch(url:)``
/// ticks on the injected ``MonotonicClock`` (the real one in production, a manual one in
/// tests).
final class StallWatch: Sendable {
    let idleTimeout: Duration
    let timeLimit: Duration?
    /// The most waiting time one tick may add.
    let maxTickCredit: Duration
    private let clock: MonotonicClock
    private let started: Duration
    private let state: Mutex<State>

    private struct State {
        /// The clock's reading since which the transfer has been waiting, or nil while the sink runs.
        var waitingSince: Duration?
        /// Waiting time counted so far in the current wait.
        var counted: Duration = .zero
        /// When the watch last ticked.
        var lastTick: Duration
    }

    init(idleTimeout: Duration, timeLimit: Duration? = nil, maxTickCredit: Duration = .seconds(1), clock: MonotonicClock = .continuous) {
        self.idleTimeout = idleTimeout
        self.timeLimit = timeLimit
        self.maxTickCredit = maxTickCredit
        self.clock = clock
        let t = clock.now
        started = t
        state = Mutex(State(waitingSince: t, lastTick: t))
    }

    /// The transfer starts waiting for the network (a connection, a head, a chunk).
    func waiting() {
        let t = clock.now
        state.withLock { state in
            guard state.waitingSince == nil else { return }
            state.waitingSince = t
            state.counted = .zero
        }
    }

    /// Something arrived: the caller's code runs now.
    func arrived() {
        state.withLock { state in
            state.waitingSince = nil
            state.counted = .zero
        }
    }

    /// One tick of the watch at `now` (the clock's reading): counts the waiting time since
    /// the last tick (at most ``maxTickCredit``) and says whether the transfer has now waited
    /// the idle timeout.
    func tick(now: Duration) -> Bool {
        state.withLock { state in
            defer { state.lastTick = max(state.lastTick, now) }
            guard let since = state.waitingSince else { return false }
            let from = max(since, state.lastTick)
            if now > from { state.counted += min(now - from, maxTickCredit) }
            return state.counted >= idleTimeout
        }
    }

    /// Whether the transfer has run past its time limit now.
    func isOverTime() -> Bool { isOverTime(now: clock.now) }

    /// Whether the transfer has run past its time limit at `now` (wall time: the sink's
    /// time and a starved process count too; a deadline is a deadline).
    func isOverTime(now: Duration) -> Bool {
        guard let timeLimit else { return false }
        return now - started >= timeLimit
    }

    /// How long the watch sleeps between ticks: an eighth of the shorter timeout, between
    /// 5 ms and 250 ms.
    var step: Duration {
        min(max(min(idleTimeout, timeLimit ?? idleTimeout) / 8, .milliseconds(5)), .milliseconds(250))
    }

    /// Returns normally never: throws `.network` with ``TransportFailure/timedOut(_:)``
    /// once stalled or ``TransportFailure/deadlineExceeded(_:)`` once over time, or
    /// `CancellationError` when the transfer ended first. Sleeps on the watch's clock.
    func watch(url: URL) async throws -> Never {
        let step = step
        while true {
            try await clock.sleep(for: step)
            let t = clock.now
            if isOverTime(now: t) { throw HTTPTransportError.network(url, .deadlineExceeded(timeLimit ?? .zero)) }
            if tick(now: t) { throw HTTPTransportError.network(url, .timedOut(idleTimeout)) }
        }
    }
}

import ClientUpdater
import Foundation
import NIOConcurrencyHelpers

/// Measures how long a transfer has been waiting for the network, to enforce the stall
/// timeout ("no byte for N seconds"), and how long it has run, for its time limit.
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
/// ticks on the real clock.
final class StallWatch: Sendable {
    let idleTimeout: Double
    let timeLimit: Double?
    /// The most waiting time one tick may add, in nanoseconds.
    let maxTickCredit: UInt64
    private let started: UInt64
    private let now: @Sendable () -> UInt64
    private let state: NIOLockedValueBox<State>

    private struct State {
        /// Uptime (ns) since which the transfer has been waiting, or nil while the sink runs.
        var waitingSince: UInt64?
        /// Waiting time counted so far in the current wait (ns).
        var counted: UInt64 = 0
        /// When the watch last ticked.
        var lastTick: UInt64
    }

    init(
        idleTimeout: Double, timeLimit: Double? = nil, maxTickCredit: Double = 1,
        now: @escaping @Sendable () -> UInt64 = { DispatchTime.now().uptimeNanoseconds }
    ) {
        self.idleTimeout = idleTimeout
        self.timeLimit = timeLimit
        self.maxTickCredit = UInt64(maxTickCredit * 1e9)
        self.now = now
        let t = now()
        started = t
        state = NIOLockedValueBox(State(waitingSince: t, lastTick: t))
    }

    /// The transfer starts waiting for the network (a connection, a head, a chunk).
    func waiting() {
        let t = now()
        state.withLockedValue { state in
            guard state.waitingSince == nil else { return }
            state.waitingSince = t
            state.counted = 0
        }
    }

    /// Something arrived: the caller's code runs now.
    func arrived() {
        state.withLockedValue { state in
            state.waitingSince = nil
            state.counted = 0
        }
    }

    /// One tick of the watch at `now`: counts the waiting time since the last tick (at most
    /// ``maxTickCredit``) and says whether the transfer has now waited the idle timeout.
    func tick(now: UInt64) -> Bool {
        state.withLockedValue { state in
            defer { state.lastTick = max(state.lastTick, now) }
            guard let since = state.waitingSince else { return false }
            let from = max(since, state.lastTick)
            if now > from { state.counted += min(now - from, maxTickCredit) }
            return Double(state.counted) / 1e9 >= idleTimeout
        }
    }

    /// Whether the transfer has run past its time limit now.
    func isOverTime() -> Bool { isOverTime(now: now()) }

    /// Whether the transfer has run past its time limit at `now` (wall time: the sink's
    /// time and a starved process count too; a deadline is a deadline).
    func isOverTime(now: UInt64) -> Bool {
        guard let timeLimit else { return false }
        return Double(now &- started) / 1e9 >= timeLimit
    }

    /// Returns normally never: throws `.network` with ``TransportFailure/timedOut(seconds:)``
    /// once stalled or ``TransportFailure/deadlineExceeded(seconds:)`` once over time, or
    /// `CancellationError` when the transfer ended first.
    func watch(url: URL) async throws -> Never {
        let step = UInt64(min(max(min(idleTimeout, timeLimit ?? idleTimeout) / 8, 0.005), 0.25) * 1e9)
        while true {
            try await Task.sleep(nanoseconds: step)
            let t = now()
            if isOverTime(now: t) { throw HTTPTransportError.network(url, .deadlineExceeded(seconds: timeLimit ?? 0)) }
            if tick(now: t) { throw HTTPTransportError.network(url, .timedOut(seconds: idleTimeout)) }
        }
    }
}

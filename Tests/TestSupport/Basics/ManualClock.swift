import Foundation
import Synchronization

/// A clock that moves only when a test calls ``advance(by:)``; sleepers wake when the
/// time passes their deadline. Lets tests drive timers without sleeping.
public final class ManualClock: Clock, Sendable {
    public struct Instant: InstantProtocol {
        public var offset: Duration
        public init(offset: Duration) { self.offset = offset }
        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }
    /// A test waiting in ``waitForSleepers(_:timeout:)`` for `count` sleepers.
    private struct Waiter {
        var count: Int
        var continuation: CheckedContinuation<Void, any Error>
        var timeout: Task<Void, Never>?
    }
    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [UInt64: Sleeper] = [:]
        var waiters: [UInt64: Waiter] = [:]
        var nextID: UInt64 = 0

        mutating func takeID() -> UInt64 {
            nextID += 1
            return nextID
        }

        /// Removes and returns the waiters whose count of sleepers is reached.
        mutating func satisfiedWaiters() -> [Waiter] {
            let ids = waiters.filter { $0.value.count <= sleepers.count }.map(\.key)
            return ids.compactMap { waiters.removeValue(forKey: $0) }
        }
    }
    private let state = Mutex(State())

    public init() {}

    public var now: Instant { state.withLock { $0.now } }
    public var minimumResolution: Duration { .nanoseconds(1) }
    /// How many tasks are sleeping on this clock right now.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// Returns once a task sleeps on this clock (a timer was armed); fails the test when
    /// none does within `timeout` seconds of real time, instead of spinning forever.
    public func waitForSleeper(timeout: Double = 30) async throws {
        try await waitForSleepers(1, timeout: timeout)
    }

    /// Returns once at least `count` tasks sleep on this clock. Suspends on a continuation
    /// that the sleeper's arrival resumes (no polling, no spinning); throws ``HarnessError``
    /// when they are not there within `timeout` seconds of real time (a bound for a hang,
    /// not a measure), and `CancellationError` when the waiting task is cancelled.
    public func waitForSleepers(_ count: Int, timeout: Double = 30) async throws {
        let id = state.withLock { $0.takeID() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
                let ready = state.withLock { s -> Bool in
                    if s.sleepers.count >= count || Task.isCancelled { return true }
                    s.waiters[id] = Waiter(count: count, continuation: c)
                    return false
                }
                if ready { return c.resume() }
                let timer = Task { [self] in
                    try? await Task.sleep(for: .milliseconds(Int(timeout * 1000)))
                    guard !Task.isCancelled else { return }
                    let (waiter, sleeping) = state.withLock { ($0.waiters.removeValue(forKey: id), $0.sleepers.count) }
                    waiter?.continuation.resume(
                        throwing: HarnessError(
                            "timed out after \(timeout) s waiting for \(count) task(s) to sleep on the manual clock (\(sleeping) did)"))
                }
                let armed = state.withLock { s -> Bool in
                    guard s.waiters[id] != nil else { return false }
                    s.waiters[id]?.timeout = timer
                    return true
                }
                if !armed { timer.cancel() }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.timeout?.cancel()
            waiter?.continuation.resume(throwing: CancellationError())
        }
        try Task.checkCancellation()
    }

    public func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        let id = state.withLock { $0.takeID() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
                let (resumeNow, satisfied) = state.withLock { s -> (Bool, [Waiter]) in
                    if deadline <= s.now || Task.isCancelled { return (true, []) }
                    s.sleepers[id] = Sleeper(deadline: deadline, continuation: c)
                    return (false, s.satisfiedWaiters())
                }
                if resumeNow { c.resume() }
                for waiter in satisfied {
                    waiter.timeout?.cancel()
                    waiter.continuation.resume()
                }
            }
        } onCancel: {
            let sleeper = state.withLock { $0.sleepers.removeValue(forKey: id) }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
        try Task.checkCancellation()
    }

    /// Moves time forward and wakes every sleeper whose deadline has come.
    public func advance(by duration: Duration) {
        let due = state.withLock { s -> [Sleeper] in
            s.now = s.now.advanced(by: duration)
            let now = s.now
            let ids = s.sleepers.filter { $0.value.deadline <= now }.map(\.key)
            return ids.compactMap { s.sleepers.removeValue(forKey: $0) }
        }
        for sleeper in due { sleeper.continuation.resume() }
    }
}

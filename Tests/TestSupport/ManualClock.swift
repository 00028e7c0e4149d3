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
    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [UInt64: Sleeper] = [:]
        var nextID: UInt64 = 0
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
        try await Poll.until("a timer armed on the manual clock", timeout: timeout) { sleeperCount > 0 }
    }

    public func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        let id = state.withLock { s -> UInt64 in
            s.nextID += 1
            return s.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
                let resumeNow = state.withLock { s -> Bool in
                    if deadline <= s.now || Task.isCancelled { return true }
                    s.sleepers[id] = Sleeper(deadline: deadline, continuation: c)
                    return false
                }
                if resumeNow { c.resume() }
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

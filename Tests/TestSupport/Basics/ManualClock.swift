import Foundation
import Synchronization

/// A clock that moves only when a test calls ``advance(by:)``; sleepers wake when the
/// time passes their deadline, and ``advance(by:)`` returns once the sleepers it woke have
/// run on until they wait again (as swift-clocks' `TestClock` does), so a test reads what
/// a woken timer did right after the advance. Lets tests drive timers without sleeping.
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
        /// Resumed with `true` by ``advance(by:)``, which then waits for it to return.
        var continuation: CheckedContinuation<Bool, any Error>
    }
    /// A test waiting in ``waitForSleepers(_:timeout:)`` for `count` sleepers, or in
    /// ``waitForSleeps(_:timeout:)`` for `count` sleeps in all (`total`).
    private struct Waiter {
        var count: Int
        var total = false
        var continuation: CheckedContinuation<Void, any Error>
        var timeout: Task<Void, Never>?
    }
    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [UInt64: Sleeper] = [:]
        var waiters: [UInt64: Waiter] = [:]
        var nextID: UInt64 = 0
        /// Sleepers ``advance(by:)`` resumed that have not returned from their sleep yet,
        /// and the advances waiting for them to.
        var waking = 0
        var advances: [CheckedContinuation<Void, Never>] = []
        /// Sleeps that have suspended on this clock since it was made.
        var slept = 0

        mutating func takeID() -> UInt64 {
            nextID += 1
            return nextID
        }

        /// Whether `count` sleepers sleep now, or (`total`) `count` sleeps suspended in all.
        func reached(_ count: Int, total: Bool) -> Bool {
            (total ? slept : sleepers.count) >= count
        }

        /// Removes and returns the waiters whose count is reached.
        mutating func satisfiedWaiters() -> [Waiter] {
            let ids = waiters.filter { reached($0.value.count, total: $0.value.total) }.map(\.key)
            return ids.compactMap { waiters.removeValue(forKey: $0) }
        }
    }
    private let state = Mutex(State())

    public init() {}

    public var now: Instant { state.withLock { $0.now } }
    public var minimumResolution: Duration { .nanoseconds(1) }
    /// How many tasks are sleeping on this clock right now.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }
    /// How many sleeps have suspended on this clock since it was made (a loop that went back
    /// to its timer adds one each time).
    public var sleepCount: Int { state.withLock { $0.slept } }

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
        try await waitFor(count, total: false, timeout: timeout)
    }

    /// Returns once `total` sleeps in all have suspended on this clock (``sleepCount``): a
    /// loop woken by something else than the clock has done its work and is back at its
    /// timer. Fails like ``waitForSleepers(_:timeout:)``.
    public func waitForSleeps(_ total: Int, timeout: Double = 30) async throws {
        try await waitFor(total, total: true, timeout: timeout)
    }

    private func waitFor(_ count: Int, total: Bool, timeout: Double) async throws {
        let id = state.withLock { $0.takeID() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
                let ready = state.withLock { s -> Bool in
                    if s.reached(count, total: total) || Task.isCancelled { return true }
                    s.waiters[id] = Waiter(count: count, total: total, continuation: c)
                    return false
                }
                if ready { return c.resume() }
                let timer = Task { [self] in
                    try? await Task.sleep(for: .milliseconds(Int(timeout * 1000)))
                    guard !Task.isCancelled else { return }
                    let (waiter, sleeping) = state.withLock { ($0.waiters.removeValue(forKey: id), total ? $0.slept : $0.sleepers.count) }
                    let what = total ? "sleeps in all" : "task(s) to sleep"
                    waiter?.continuation.resume(
                        throwing: HarnessError("timed out after \(timeout) s waiting for \(count) \(what) on the manual clock (\(sleeping) did)"))
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
        let woken = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (c: CheckedContinuation<Bool, any Error>) in
                let (resumeNow, satisfied) = state.withLock { s -> (Bool, [Waiter]) in
                    if deadline <= s.now || Task.isCancelled { return (true, []) }
                    s.sleepers[id] = Sleeper(deadline: deadline, continuation: c)
                    s.slept += 1
                    return (false, s.satisfiedWaiters())
                }
                if resumeNow { c.resume(returning: false) }
                for waiter in satisfied {
                    waiter.timeout?.cancel()
                    waiter.continuation.resume()
                }
            }
        } onCancel: {
            let sleeper = state.withLock { $0.sleepers.removeValue(forKey: id) }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
        if woken {
            // Back in the sleeper's task: the advance that woke it may go on settling.
            let advances = state.withLock { s -> [CheckedContinuation<Void, Never>] in
                s.waking -= 1
                guard s.waking == 0 else { return [] }
                defer { s.advances = [] }
                return s.advances
            }
            for advance in advances { advance.resume() }
        }
        try Task.checkCancellation()
    }

    /// Moves time forward, wakes every sleeper whose deadline has come, and returns once
    /// they have run on until they wait again: each has returned from its sleep, and then
    /// either as many sleeps have suspended on this clock as were woken (a loop back at its
    /// timer) or the pool has been handed over ``settleRounds`` times at the lowest
    /// priority, which lets the jobs the woken tasks queued run first. What a woken task
    /// hands to another thread (the blocking executor, a server) is not waited for: a test
    /// waits for that itself.
    public func advance(by duration: Duration) async {
        let (due, slept) = state.withLock { s -> ([Sleeper], Int) in
            s.now = s.now.advanced(by: duration)
            let now = s.now
            let ids = s.sleepers.filter { $0.value.deadline <= now }.sorted { $0.value.deadline < $1.value.deadline }.map(\.key)
            let due = ids.compactMap { s.sleepers.removeValue(forKey: $0) }
            s.waking += due.count
            return (due, s.slept)
        }
        if due.isEmpty { return }
        for sleeper in due { sleeper.continuation.resume(returning: true) }
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let returned = state.withLock { s -> Bool in
                if s.waking == 0 { return true }
                s.advances.append(c)
                return false
            }
            if returned { c.resume() }
        }
        for _ in 0..<Self.settleRounds {
            if state.withLock({ $0.slept - slept }) >= due.count { break }
            await Task.detached(priority: .background) { await Task.yield() }.value
        }
    }

    /// The most times ``advance(by:)`` hands the pool over once the sleepers it woke
    /// returned, while they have not all suspended on this clock again.
    public static let settleRounds = 200
}

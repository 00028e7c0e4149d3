import ClientFoundation
import ShellRules
import Synchronization
import TestSupport
import Testing

/// The shell's line throttle (a burst, then one line a second, on an injected clock) and
/// the latch that holds the first requests until the first version is chosen.
@Suite struct LineThrottleAndLatchTests {
    @Test func aBurstThenOneLineASecond() async {
        let clock = ManualClock()
        let throttle = LineThrottle(burst: 3, clock: MonotonicClock(clock))
        #expect((0..<3).allSatisfy { _ in throttle.admit() }, "the burst")
        #expect(!throttle.admit(), "past the burst")
        await clock.advance(by: .milliseconds(500))
        #expect(!throttle.admit())
        await clock.advance(by: .milliseconds(1000))
        #expect(throttle.admit(), "one more after a second")
        await clock.advance(by: .milliseconds(100))
        #expect(!throttle.admit())
    }

    /// The shell's first check waits for the first version at most so long: the latch, or
    /// the limit on the clock, whichever comes first, and nothing of the wait left behind.
    @Test func aTimedWaitEndsAtTheLimitOrWhenTheLatchOpens() async throws {
        let clock = ManualClock()
        let latch = FirstVersionLatch(clock: MonotonicClock(clock))
        let timedOut = Task { await latch.wait(atMost: .seconds(10)) }
        try await clock.waitForSleeper()
        await clock.advance(by: .seconds(10))
        await timedOut.value
        #expect(clock.sleeperCount == 0 && latch.waiting == 0, "the limit ended the wait, and its wait at the latch")

        let opened = Task { await latch.wait(atMost: .seconds(10)) }
        try await clock.waitForSleeper()
        latch.open()
        await opened.value
        #expect(clock.sleeperCount == 0, "the latch ended the wait, and its sleep")
    }

    @Test func theLatchHoldsWaitersUntilOpenedAndThenNoOne() async throws {
        final class Counts: Sendable {
            let arrived = Mutex(0)
            let passed = Mutex(0)
        }
        let latch = FirstVersionLatch()
        let counts = Counts()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<3 {
                group.addTask {
                    counts.arrived.withLock { $0 += 1 }
                    await latch.wait()
                    counts.passed.withLock { $0 += 1 }
                }
            }
            // Every waiter is held at the latch: a latch that held no one would let them
            // through instead (its count of waiters would never reach three).
            try await Poll.until("three waiters held at the latch") { latch.waiting == 3 }
            #expect(counts.arrived.withLock { $0 } == 3)
            #expect(counts.passed.withLock { $0 } == 0, "a closed latch lets no one through")
            latch.open()
            latch.open()  // again: nothing
            try await group.waitForAll()
        }
        #expect(counts.passed.withLock { $0 } == 3)
        await latch.wait()  // open: never waits
    }
}

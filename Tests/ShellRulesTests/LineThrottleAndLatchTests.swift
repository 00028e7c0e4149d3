import ShellRules
import Synchronization
import Testing

/// The shell's line throttle (a burst, then one line a second, on an injected clock) and
/// the latch that holds the first requests until the first version is chosen.
@Suite struct LineThrottleAndLatchTests {
    @Test func aBurstThenOneLineASecond() {
        let throttle = LineThrottle(burst: 3)
        let start = ContinuousClock.now
        #expect((0..<3).allSatisfy { _ in throttle.admit(now: start) }, "the burst")
        #expect(!throttle.admit(now: start), "past the burst")
        #expect(!throttle.admit(now: start + .milliseconds(500)))
        #expect(throttle.admit(now: start + .milliseconds(1500)), "one more after a second")
        #expect(!throttle.admit(now: start + .milliseconds(1600)))
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
            // Every waiter has reached the latch, and has had time to pass it were it open:
            // a latch that held no one would let them through well inside this pause.
            while counts.arrived.withLock({ $0 }) < 3 { try await Task.sleep(for: .milliseconds(5)) }
            try await Task.sleep(for: .milliseconds(200))
            #expect(counts.passed.withLock { $0 } == 0, "a closed latch lets no one through")
            latch.open()
            latch.open()  // again: nothing
            try await group.waitForAll()
        }
        #expect(counts.passed.withLock { $0 } == 3)
        await latch.wait()  // open: never waits
    }
}

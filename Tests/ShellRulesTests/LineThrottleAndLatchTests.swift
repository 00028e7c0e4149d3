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

    @Test func theLatchHoldsWaitersUntilOpenedAndThenNoOne() async {
        final class Passed: Sendable {
            let count = Mutex(0)
        }
        let latch = FirstVersionLatch()
        let passed = Passed()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<3 {
                group.addTask {
                    await latch.wait()
                    passed.count.withLock { $0 += 1 }
                }
            }
            #expect(passed.count.withLock { $0 } == 0)
            latch.open()
            latch.open()  // again: nothing
            await group.waitForAll()
        }
        #expect(passed.count.withLock { $0 } == 3)
        await latch.wait()  // open: never waits
    }
}

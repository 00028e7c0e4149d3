import ClientFoundation
import Synchronization
import TestSupport
import Testing

/// The device's waiting primitives (`WakeSignal`, `Handshake`, `Latch`) on a manual clock:
/// each wait ends at the event or the deadline it names, a cancelled one at once, and
/// nothing a wait started is left behind (no sleeper on the clock, no waiter). Nothing
/// sleeps: a test waits for a sleeper on the clock, or for the waiters it started to be at
/// the primitive (`waitForWaiters`).
@Suite struct AsyncPrimitivesTests {
    // MARK: WakeSignal

    @Test func aWakeBeforeTheWaitIsNotLost() async {
        let clock = ManualClock()
        let signal = WakeSignal(clock: MonotonicClock(clock))
        signal.wake()
        await signal.wait(upTo: .seconds(60))  // returns at once: the wake was pending
        #expect(clock.sleeperCount == 0)
    }

    @Test func aWaitEndsAtAWakeAndItsSleepWithIt() async throws {
        let clock = ManualClock()
        let signal = WakeSignal(clock: MonotonicClock(clock))
        let waiting = Task { await signal.wait(upTo: .seconds(60)) }
        try await clock.waitForSleeper()
        signal.wake()
        await waiting.value
        #expect(clock.sleeperCount == 0, "the wait's sleep ended with it")
        #expect(clock.now.offset == .zero, "no time passed")
    }

    @Test func aWaitEndsAtItsDeadlineAndConsumesNoLaterWake() async throws {
        let clock = ManualClock()
        let signal = WakeSignal(clock: MonotonicClock(clock))
        let waiting = Task { await signal.wait(until: .seconds(30)) }
        try await clock.waitForSleeper()
        await clock.advance(by: .seconds(29))
        #expect(clock.sleeperCount == 1, "still a second to go")
        await clock.advance(by: .seconds(1))
        await waiting.value
        // A wake after the wait ended ends the next one at once.
        signal.wake()
        await signal.wait(upTo: .seconds(60))
        #expect(clock.sleeperCount == 0)
    }

    @Test func aCancelledWaitEndsAndLeavesNoWakePending() async throws {
        let clock = ManualClock()
        let signal = WakeSignal(clock: MonotonicClock(clock))
        let waiting = Task { await signal.wait(upTo: .seconds(60)) }
        try await clock.waitForSleeper()
        waiting.cancel()
        await waiting.value
        #expect(clock.sleeperCount == 0)
        // The cancellation consumed nothing and left nothing: the next wait sleeps.
        let next = Task { await signal.wait(upTo: .seconds(5)) }
        try await clock.waitForSleeper()
        await clock.advance(by: .seconds(5))
        await next.value
    }

    // MARK: Handshake

    @Test func everyWaiterNowAndLaterGetsTheFirstValue() async throws {
        let handshake = Handshake<Int>()
        let waiters = (0..<3).map { _ in Task { try await handshake.value() } }
        await handshake.waitForWaiters(3)
        #expect(!handshake.isResolved)
        handshake.resolve(.success(7))
        handshake.resolve(.success(8))  // again: nothing
        for waiter in waiters { #expect(try await waiter.value == 7) }
        #expect(try await handshake.value() == 7, "a later waiter gets it at once")
        #expect(handshake.waiting == 0)
    }

    @Test func aFailureReachesEveryWaiter() async throws {
        struct Refused: Error {}
        let handshake = Handshake<Int>()
        handshake.resolve(.failure(Refused()))
        await #expect(throws: Refused.self) { try await handshake.value() }
    }

    @Test func aCancelledWaiterStopsAndTheOthersGoOnWaiting() async throws {
        let handshake = Handshake<String>()
        let cancelled = Task { try await handshake.value() }
        let patient = Task { try await handshake.value() }
        await handshake.waitForWaiters(2)
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        #expect(handshake.waiting == 1)
        handshake.resolve(.success("up"))
        #expect(try await patient.value == "up")
    }

    @Test func waitingForWaitersEndsWhenTheyAreThereOrTheValueIsTold() async throws {
        let handshake = Handshake<Int>()
        let watcher = Task { await handshake.waitForWaiters(5) }
        let waiter = Task { try await handshake.value() }
        await handshake.waitForWaiters(1)
        #expect(handshake.waiting == 1)
        handshake.resolve(.success(1))  // five never wait: the watcher ends with the value told
        await watcher.value
        #expect(try await waiter.value == 1)
        await handshake.waitForWaiters(5)  // told: at once
    }

    // MARK: Latch

    @Test func aLatchHoldsItsWaitersUntilItOpensThenNoOne() async throws {
        final class Passed: Sendable {
            let count = Mutex(0)
        }
        let latch = Latch()
        let passed = Passed()
        let waiters = (0..<3).map { _ in
            Task {
                try await latch.wait()
                passed.count.withLock { $0 += 1 }
            }
        }
        await latch.waitForWaiters(3)
        #expect(passed.count.withLock { $0 } == 0 && !latch.isOpen)
        latch.open()
        latch.open()  // again: nothing
        for waiter in waiters { try await waiter.value }
        #expect(passed.count.withLock { $0 } == 3)
        try await latch.wait()  // open: never waits
    }

    @Test func aTimedWaitEndsAtItsDeadlineOrWhenTheLatchOpens() async throws {
        let manual = ManualClock()
        let clock = MonotonicClock(manual)
        let latch = Latch()
        let late = Task { await latch.wait(atMost: .seconds(10), on: clock) }
        try await manual.waitForSleeper()
        await manual.advance(by: .seconds(10))
        #expect(await late.value == false)
        #expect(latch.waiting == 0 && manual.sleeperCount == 0, "nothing of the wait is left")

        let early = Task { await latch.wait(until: manual.now.advanced(by: .seconds(10)), on: manual) }
        try await manual.waitForSleeper()
        latch.open()
        #expect(await early.value == true)
        #expect(manual.sleeperCount == 0, "its sleep was cancelled")
        #expect(await latch.wait(atMost: .seconds(10), on: clock) == true, "open: at once")
    }

    @Test func aCancelledTimedWaitEndsAtOnce() async throws {
        let manual = ManualClock()
        let latch = Latch()
        let waiting = Task { await latch.wait(atMost: .seconds(10), on: MonotonicClock(manual)) }
        try await manual.waitForSleeper()
        waiting.cancel()
        #expect(await waiting.value == false)
        #expect(latch.waiting == 0 && manual.sleeperCount == 0)
    }
}

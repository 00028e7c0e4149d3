/// A one-shot gate any number of tasks wait at: closed until ``open()``, then open for
/// good, so a wait that starts after it returns at once. The shell's first-version latch,
/// the rollout guard's stop, a generation of the download holds' waiters.
///
/// Its waits are structured: the timed ones race the gate against a sleep on the injected
/// ``MonotonicClock`` (or any `Clock`) in a task group and cancel the loser, so no task
/// outlives the wait, and a test's manual clock ends them without sleeping.
package final class Latch: Sendable {
    private let gate = Handshake<Void>()

    /// A closed latch.
    package init() {}

    /// Whether ``open()`` was called.
    package var isOpen: Bool { gate.isResolved }

    /// Tasks waiting at the latch now.
    package var waiting: Int { gate.waiting }

    /// Returns once `count` tasks wait at the latch at once (a test's event), or when the
    /// task is cancelled.
    package func waitForWaiters(_ count: Int) async { await gate.waitForWaiters(count) }

    /// Opens the latch and lets every waiter go on; again is a no-op.
    package func open() { gate.resolve(.success(())) }

    /// Returns once the latch is open.
    /// - Throws: `CancellationError` when the waiting task is cancelled first.
    package func wait() async throws { try await gate.value() }

    /// Returns `true` once the latch is open, `false` when `deadline` (a reading of `clock`)
    /// comes first or the task is cancelled.
    package func wait(until deadline: Duration, on clock: MonotonicClock) async -> Bool {
        await wait(orAfter: { try await clock.sleep(until: deadline) })
    }

    /// Returns `true` once the latch is open, `false` when `limit` on `clock` passes first
    /// or the task is cancelled.
    package func wait(atMost limit: Duration, on clock: MonotonicClock) async -> Bool {
        await wait(until: clock.now + limit, on: clock)
    }

    /// Returns `true` once the latch is open, `false` when `deadline` on `clock` comes first
    /// or the task is cancelled.
    package func wait<C: Clock>(until deadline: C.Instant, on clock: C) async -> Bool {
        await wait(orAfter: { try await clock.sleep(until: deadline, tolerance: nil) })
    }

    /// The gate raced against `sleep`: the first to end cancels the other.
    private func wait(orAfter sleep: @escaping @Sendable () async throws -> Void) async -> Bool {
        if isOpen { return true }
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask { (try? await self.wait()) != nil }
            group.addTask {
                try? await sleep()
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }
}

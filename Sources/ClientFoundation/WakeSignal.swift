import Synchronization

/// The one wakeable sleep of the device's loops (the apply driver, the report sender, the
/// page problems' period): a wake-up that is not lost when it comes before the wait, since
/// a wait returns at once after a ``wake()`` no wait has consumed yet. Its timer runs on
/// the injected ``MonotonicClock``, so a test's manual clock ends a wait without sleeping.
///
/// A wait is structured: the sleep and the wait for a wake-up are two child tasks of one
/// task group, and the first to end cancels the other, so nothing the wait started
/// outlives it (docs/concurrency.md#waits-latches-and-rate-caps).
public final class WakeSignal: Sendable {
    private struct State {
        var pending = false
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter: UInt64 = 0
    }
    private let state = Mutex(State())
    private let clock: MonotonicClock

    /// A signal whose waits time out on `clock`.
    public init(clock: MonotonicClock) {
        self.clock = clock
    }

    /// Ends the current waits, or the next one at once when none waits.
    public func wake() {
        let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            guard !s.waiters.isEmpty else {
                s.pending = true
                return []
            }
            defer { s.waiters = [:] }
            return Array(s.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns after a wake-up, after `duration` on the clock, or when the task is cancelled.
    public func wait(upTo duration: Duration) async {
        await wait(until: clock.now + duration)
    }

    /// Returns after a wake-up, at `deadline` (a reading of the clock), or when the task is
    /// cancelled.
    public func wait(until deadline: Duration) async {
        let woken = state.withLock { s in
            defer { s.pending = false }
            return s.pending
        }
        if woken || Task.isCancelled { return }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [clock] in try? await clock.sleep(until: deadline) }
            group.addTask { await self.wakeUp() }
            _ = await group.next()
            group.cancelAll()
        }
    }

    /// Returns at the next wake-up (at once for one no wait has consumed), or when the task
    /// is cancelled, which consumes nothing.
    private func wakeUp() async {
        let id = state.withLock { s in
            defer { s.nextWaiter += 1 }
            return s.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { s -> Bool in
                    if s.pending {
                        s.pending = false
                        return true
                    }
                    if Task.isCancelled { return true }
                    s.waiters[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}

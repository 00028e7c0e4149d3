import Synchronization

/// The one wakeable sleep of the device's loops (the apply driver, the report sender): a
/// wake-up that is not lost when it comes before the wait, since ``wait(upTo:)`` returns at
/// once after a ``wake()`` it has not consumed yet. Its timer runs on the injected
/// ``MonotonicClock``, so a test's manual clock ends a wait without sleeping.
public final class WakeSignal: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
    }
    private let state = Mutex(State())
    private let clock: MonotonicClock

    /// A signal whose waits time out on `clock`.
    public init(clock: MonotonicClock) {
        self.clock = clock
    }

    /// Ends the current wait, or the next one at once.
    public func wake() {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            if let w = s.waiter {
                s.waiter = nil
                return w
            }
            s.pending = true
            return nil
        }
        waiter?.resume()
    }

    /// Returns after a wake-up, after `duration` on the clock, or when the task is cancelled.
    public func wait(upTo duration: Duration) async {
        let timer = Task { [weak self, clock] in
            // Cancelled (the wait ended first): no wake-up, else the next wait would end at
            // once and the driver would spin.
            do { try await clock.sleep(for: duration) } catch { return }
            self?.wake()
        }
        defer { timer.cancel() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { s -> Bool in
                    if s.pending {
                        s.pending = false
                        return true
                    }
                    s.waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            wake()
        }
    }
}

/// The wait for a lock another process holds: attempts until one succeeds or `wait` has
/// passed on the injected ``MonotonicClock``, sleeping between attempts (from `firstDelay`,
/// doubling up to `maxDelay`). The sleeps suspend the task, never a thread, and a test
/// drives them with a manual clock instead of waiting in real time.
package struct LockWait: Sendable {
    /// How long to keep trying; zero tries once.
    package let wait: Duration
    package let clock: MonotonicClock
    package let firstDelay: Duration
    package let maxDelay: Duration

    package init(
        _ wait: Duration, clock: MonotonicClock = .continuous, firstDelay: Duration = .milliseconds(5), maxDelay: Duration = .milliseconds(100)
    ) {
        self.wait = max(wait, .zero)
        self.clock = clock
        self.firstDelay = firstDelay
        self.maxDelay = maxDelay
    }

    /// Calls `attempt` until it returns true (then true) or `wait` has passed since the first
    /// call (then false). Rethrows what `attempt` throws; `CancellationError` when the task
    /// is cancelled while it sleeps.
    package func until(_ attempt: () async throws -> Bool) async throws -> Bool {
        let deadline = clock.now + wait
        var delay = firstDelay
        while try await !attempt() {
            guard clock.now < deadline else { return false }
            try await clock.sleep(for: delay)
            delay = min(delay * 2, maxDelay)
        }
        return true
    }
}

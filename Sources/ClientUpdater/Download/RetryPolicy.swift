import ClientFoundation
import Foundation

/// How often and how patiently transient failures are retried: capped exponential
/// backoff with jitter.
package struct RetryPolicy: Sendable, Equatable {
    /// Total attempts, the first included (1 = no retry).
    package var maxAttempts: Int
    /// The delay before the first retry.
    package var initialDelay: Duration
    /// No delay is longer than this.
    package var maxDelay: Duration
    /// Each retry waits `multiplier` times longer than the previous one.
    package var multiplier: Double
    /// Fraction of the delay that is randomised (0 = none, 0.5 = between half and all).
    package var jitter: Double

    package init(
        maxAttempts: Int = 5, initialDelay: Duration = .milliseconds(500), maxDelay: Duration = .seconds(8), multiplier: Double = 2,
        jitter: Double = 0.5
    ) {
        self.maxAttempts = max(1, maxAttempts)
        self.initialDelay = initialDelay
        self.maxDelay = maxDelay
        self.multiplier = multiplier
        self.jitter = min(max(jitter, 0), 1)
    }

    /// 5 attempts, waiting about 0.5, 1, 2, 4 s in between (at most 7.5 s in all).
    package static let standard = RetryPolicy()
    /// A single attempt.
    package static let never = RetryPolicy(maxAttempts: 1)

    /// The delay before retry number `retry` (1-based), with `random` in `0..<1`.
    package func delay(beforeRetry retry: Int, random: Double) -> Duration {
        let factor = pow(multiplier, Double(max(0, retry - 1)))
        // The factor grows without bound; past the cap only the cap counts.
        let base = factor.isFinite && initialDelay.inSeconds * factor < maxDelay.inSeconds ? initialDelay * factor : maxDelay
        return base * (1 - jitter * random)
    }
}

/// Waits between retries. Injected so tests never sleep.
package protocol Sleeper: Sendable {
    /// Waits `duration`; throws `CancellationError` when the task is cancelled.
    func sleep(for duration: Duration) async throws
}

/// The real ``Sleeper``: a sleep on a ``MonotonicClock`` (the real one unless a caller
/// gives its own).
package struct TaskSleeper: Sleeper {
    package let clock: MonotonicClock
    package init(clock: MonotonicClock = .continuous) { self.clock = clock }
    package func sleep(for duration: Duration) async throws {
        guard duration > .zero else { return try Task.checkCancellation() }
        try await clock.sleep(for: duration)
    }
}

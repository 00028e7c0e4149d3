import Foundation

/// How often and how patiently transient failures are retried: capped exponential
/// backoff with jitter.
package struct RetryPolicy: Sendable, Equatable {
    /// Total attempts, the first included (1 = no retry).
    package var maxAttempts: Int
    /// The delay before the first retry, in seconds.
    package var initialDelay: Double
    /// No delay is longer than this, in seconds.
    package var maxDelay: Double
    /// Each retry waits `multiplier` times longer than the previous one.
    package var multiplier: Double
    /// Fraction of the delay that is randomised (0 = none, 0.5 = between half and all).
    package var jitter: Double

    package init(maxAttempts: Int = 5, initialDelay: Double = 0.5, maxDelay: Double = 8, multiplier: Double = 2, jitter: Double = 0.5) {
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
    package func delay(beforeRetry retry: Int, random: Double) -> Double {
        let exponent = Double(max(0, retry - 1))
        let base = min(maxDelay, initialDelay * pow(multiplier, exponent))
        return base * (1 - jitter * random)
    }
}

/// Waits between retries. Injected so tests never sleep.
package protocol Sleeper: Sendable {
    /// Waits `seconds`; throws `CancellationError` when the task is cancelled.
    func sleep(seconds: Double) async throws
}

/// The real ``Sleeper``: `Task.sleep`.
package struct TaskSleeper: Sleeper {
    package init() {}
    package func sleep(seconds: Double) async throws {
        guard seconds > 0 else { return try Task.checkCancellation() }
        try await Task.sleep(nanoseconds: UInt64(seconds * 1_000_000_000))
    }
}

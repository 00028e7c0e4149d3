import ClientUpdater
import Foundation

/// When to try a request again: capped backoff for transient failures (connection
/// refused or reset before or during a response, timeouts, 5xx, 408, 429).
///
/// Unlike the original iOS plugin, a failure before any response is retried too.
public struct RetryPolicy: Sendable, Equatable {
    /// Seconds to wait before the 2nd, 3rd, … attempt; its length + 1 is the number of attempts.
    public var delays: [Double]
    /// Random spread applied to each delay (0.25 = ±25 %), so devices do not retry in step.
    public var jitter: Double

    public init(delays: [Double], jitter: Double = 0.25) {
        self.delays = delays
        self.jitter = jitter
    }

    /// The default: the Capacitor port's triangular backoff (0.1, 1, 2, 4, 7 s), six attempts.
    public static let standard = RetryPolicy(delays: [0.1, 1, 2, 4, 7])
    /// One attempt, no retry.
    public static let none = RetryPolicy(delays: [])

    /// The wait before attempt `attempt + 1` (attempts count from 1), or `nil` to give up.
    func delay(after attempt: Int) -> Double? {
        guard attempt >= 1, attempt <= delays.count else { return nil }
        let base = min(delays[attempt - 1], 30)
        return jitter > 0 ? base * Double.random(in: (1 - jitter)...(1 + jitter)) : base
    }

    /// True when a response status is worth another attempt.
    static func isTransient(status: Int) -> Bool {
        status >= 500 || status == 408 || status == 429
    }

    /// True when an error thrown by a transport is worth another attempt.
    static func isTransient(_ error: any Error) -> Bool {
        if error is CancellationError || error is MeteorError { return false }
        if let e = error as? UpdaterError { return e.code == .network }
        return true
    }
}

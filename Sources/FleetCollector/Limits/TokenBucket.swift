/// A token bucket: `capacity` tokens, refilled at `rate` tokens a second, one taken per
/// request. A pure value: the caller passes the time (seconds on a monotonic clock).
public struct TokenBucket: Sendable, Equatable {
    /// Tokens a second.
    public let rate: Double
    /// The most tokens held (the burst).
    public let capacity: Double
    private(set) var tokens: Double
    private(set) var updated: Double

    /// A full bucket at time `now`.
    public init(rate: Double, capacity: Double, now: Double) {
        self.rate = rate
        self.capacity = max(1, capacity)
        tokens = self.capacity
        updated = now
    }

    /// Takes one token at `now`: `nil` when granted, else the seconds until one is there.
    public mutating func take(now: Double) -> Double? {
        if now > updated {
            tokens = min(capacity, tokens + (now - updated) * rate)
            updated = now
        }
        if tokens >= 1 {
            tokens -= 1
            return nil
        }
        return (1 - tokens) / rate
    }
}

/// The one token bucket of clientctl: what every rate cap counts with (the download rate
/// cap, the collector's flood guard, the page's app problems, the shell's error lines).
///
/// A pure value on the readings of a ``MonotonicClock`` (durations since the clock was
/// made, a manual clock's in tests): the caller passes the reading, so the bucket is
/// tested on readings alone and every user keeps it in its own `Mutex`. It holds at most
/// ``capacity`` tokens and earns ``refill`` tokens every ``interval``, in proportion to
/// the time between readings; a reading earlier than the last earns nothing. Two ways to
/// take:
/// - ``take(_:at:)`` takes only when the tokens are there (a request, a line): nothing, or
///   how long until they are;
/// - ``spend(_:at:)`` always takes (bytes already received), leaving the bucket in debt,
///   and says how long the debt takes to pay back.
package struct TokenBucket: Sendable, Equatable {
    /// The most tokens held: the burst.
    package let capacity: Double
    /// Tokens earned every ``interval``.
    package let refill: Double
    /// The period ``refill`` is earned in.
    package let interval: Duration
    /// Tokens held (negative: debt still to wait out).
    package private(set) var tokens: Double
    /// The reading ``tokens`` was last brought up to date at (none before the first take).
    private var reading: Duration?

    /// A full bucket of `capacity` tokens (at least 1) earning `refill` tokens (more than
    /// zero) every `interval` (more than zero).
    package init(capacity: Double, refill: Double, every interval: Duration) {
        self.capacity = max(1, capacity)
        self.refill = refill > 0 ? refill : 1
        self.interval = interval > .zero ? interval : .seconds(1)
        tokens = self.capacity
    }

    /// Takes `count` tokens at the reading `now` when the bucket holds them: `nil` when it
    /// took them, else how long until it will hold them (nothing is taken).
    package mutating func take(_ count: Double = 1, at now: Duration) -> Duration? {
        earn(until: now)
        guard tokens < count else {
            tokens -= count
            return nil
        }
        return time(for: count - tokens)
    }

    /// Takes `count` tokens at the reading `now` whether or not the bucket holds them, and
    /// says how long to wait before the debt is paid back: zero while it has credit.
    package mutating func spend(_ count: Double, at now: Duration) -> Duration {
        earn(until: now)
        tokens -= max(0, count)
        guard tokens < 0 else { return .zero }
        return time(for: -tokens)
    }

    /// How long the bucket takes to earn `tokens`, in whole nanoseconds rounded up: a wait
    /// never falls short of it.
    private func time(for tokens: Double) -> Duration {
        .nanoseconds(Int64(min((tokens * Self.nanoseconds(interval) / refill).rounded(.up), 9e18)))
    }

    /// Credits the time since the last reading, up to ``capacity``.
    private mutating func earn(until now: Duration) {
        if let reading, now > reading {
            tokens = min(capacity, tokens + Self.nanoseconds(now - reading) * refill / Self.nanoseconds(interval))
        }
        reading = max(reading ?? now, now)
    }

    private static func nanoseconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) * 1e9 + Double(attoseconds / 1_000_000_000)
    }
}

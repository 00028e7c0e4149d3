import ClientFoundation
import Synchronization

/// Admits a few lines at once, then at most one a second, from any thread: a page cannot
/// fill the shell's output (and a supervisor's journal) with one line per refused call,
/// and a single refusal is always printed. ClientFoundation's ``TokenBucket`` on the
/// injected monotonic clock: ``burst`` tokens, one more every second.
package final class LineThrottle: Sendable {
    /// Lines admitted at once after a quiet spell.
    package let burst: Double
    private let clock: MonotonicClock
    private let bucket: Mutex<TokenBucket>

    /// A throttle admitting `burst` lines at once, its time read from `clock`.
    package init(burst: Int = 5, clock: MonotonicClock = .continuous) {
        self.burst = Double(burst)
        self.clock = clock
        bucket = Mutex(TokenBucket(capacity: Double(burst), refill: 1, every: .seconds(1)))
    }

    /// Whether a line may be written now (it takes a token).
    package func admit() -> Bool {
        let now = clock.now
        return bucket.withLock { $0.take(at: now) == nil }
    }
}

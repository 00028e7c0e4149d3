import Synchronization

/// Admits a few lines at once, then at most one a second, from any thread: a page cannot
/// fill the shell's output (and a supervisor's journal) with one line per refused call,
/// and a single refusal is always printed. A token bucket: ``burst`` tokens, one more
/// every second.
package final class LineThrottle: Sendable {
    /// Lines admitted at once after a quiet spell.
    package let burst: Double
    private let state: Mutex<(tokens: Double, at: ContinuousClock.Instant?)>

    package init(burst: Int = 5) {
        self.burst = Double(burst)
        state = Mutex((Double(burst), nil))
    }

    /// Whether a line may be written at `now` (it takes a token).
    package func admit(now: ContinuousClock.Instant = .now) -> Bool {
        state.withLock { state in
            if let at = state.at {
                let elapsed: Duration = now - at
                state.tokens = min(burst, state.tokens + elapsed / .seconds(1))
            }
            state.at = now
            guard state.tokens >= 1 else { return false }
            state.tokens -= 1
            return true
        }
    }
}

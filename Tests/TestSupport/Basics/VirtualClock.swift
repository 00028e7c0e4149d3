import Foundation
import Synchronization

/// A clock whose sleeps return at once and move its time to their deadline: virtual time
/// that passes only by waiting. A rate limiter on it runs a transfer at full speed while its
/// time adds up the waits it asked for, so a test reads "how long the cap made it take"
/// without sleeping and without a timed assertion.
public final class VirtualClock: Clock, Sendable {
    public typealias Instant = ManualClock.Instant

    private let state = Mutex(Instant(offset: .zero))

    public init() {}

    public var now: Instant { state.withLock { $0 } }
    public var minimumResolution: Duration { .nanoseconds(1) }

    /// Moves time to `deadline` (never back) and returns; throws when the task is cancelled.
    public func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        try Task.checkCancellation()
        state.withLock { now in if now < deadline { now = deadline } }
    }
}

import Foundation
import Synchronization

/// The one monotonic clock the device's timers read and sleep on: durations since the clock
/// was made, never a wall-clock date. It wraps any standard-library `Clock` whose duration is
/// `Duration` (a `ContinuousClock` in production, a manual clock in tests), so the watchdog,
/// the apply driver and every other timer are driven by the same seam and tested without
/// sleeping. Instants of the device's own time (what a release's `expires` is judged against)
/// are not this clock's: they stay on `DeviceClock`.
public struct MonotonicClock: Sendable {
    private let elapsed: @Sendable () -> Duration
    private let sleeper: @Sendable (Duration) async throws -> Void

    /// Wraps `clock`; time zero is now.
    public init<C: Clock>(_ clock: C) where C.Duration == Duration {
        let origin = clock.now
        elapsed = { origin.duration(to: clock.now) }
        sleeper = { deadline in try await clock.sleep(until: origin.advanced(by: deadline), tolerance: nil) }
    }

    /// The real monotonic clock (`ContinuousClock`, which no setting of the system's time
    /// moves), or the clock a simulation made the whole process's (``replaceForProcess(with:)``).
    public static var continuous: MonotonicClock { replacement.withLock { $0 } ?? MonotonicClock(ContinuousClock()) }

    /// What ``continuous`` gives instead of the real clock, when set.
    private static let replacement = Mutex<MonotonicClock?>(nil)

    /// From now on ``continuous`` is `clock`, for the whole process: the device simulator's
    /// agents' world (docs/simulation.md#the-agents-world) runs every timer of the process on
    /// its simulated time, the lock waits and other defaults too, as FoundationDB's simulation
    /// replaces the whole world's time. Nothing else calls it.
    package static func replaceForProcess(with clock: MonotonicClock) {
        replacement.withLock { $0 = clock }
    }

    /// Time since the clock was made.
    public var now: Duration { elapsed() }

    /// Suspends until `deadline` (time since the clock was made); throws on cancellation.
    public func sleep(until deadline: Duration) async throws {
        try await sleeper(deadline)
    }

    /// Suspends for `duration` from now; throws on cancellation.
    public func sleep(for duration: Duration) async throws {
        try await sleeper(elapsed() + duration)
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`: for a figure shown to a person or written in a
    /// file, never for arithmetic on time.
    public var inSeconds: Double {
        let (s, a) = components
        return Double(s) + Double(a) / 1e18
    }

    /// The duration in whole milliseconds, rounded toward zero (and held within `Int64`): for
    /// a figure in a report, an event or a file, never for arithmetic on time.
    public var inMilliseconds: Int64 {
        let (s, a) = components
        let (ms, overflow) = s.multipliedReportingOverflow(by: 1000)
        return overflow ? (s < 0 ? .min : .max) : ms + a / 1_000_000_000_000_000
    }

    /// `seconds` as a duration, rounded to the millisecond; a value that is not finite or is
    /// negative is zero, and the result is at most `limit`.
    public static func seconds(clamping seconds: Double, limit: Duration = .seconds(86_400 * 366)) -> Duration {
        guard seconds.isFinite, seconds > 0 else { return .zero }
        return min(.milliseconds(Int64(min(seconds, limit.inSeconds) * 1000)), limit)
    }

    /// The time from one wall-clock instant to another, rounded to the millisecond, negative
    /// when `to` is earlier (a clock set back), and held within a century either way: for
    /// comparing a wall clock's advance with the monotonic clock's, or sleeping until a
    /// wall-clock moment.
    public static func wallClock(from: Date, to: Date) -> Duration {
        let century = 100 * 366 * 86_400.0
        let seconds = min(max(to.timeIntervalSince(from), -century), century)
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }
}

/// The monotonic clock a watchdog driver reads and sleeps on, as `Duration` since the
/// clock was made. Wraps any `Clock` (a `ContinuousClock` in production, a manual test
/// clock in tests), so the watchdog itself only ever sees durations.
public struct WatchdogClock: Sendable {
    private let elapsed: @Sendable () -> Duration
    private let sleeper: @Sendable (Duration) async throws -> Void

    /// Wraps `clock`; time zero is now.
    public init<C: Clock>(_ clock: C) where C.Duration == Duration {
        let origin = clock.now
        elapsed = { origin.duration(to: clock.now) }
        sleeper = { deadline in try await clock.sleep(until: origin.advanced(by: deadline), tolerance: nil) }
    }

    /// The real monotonic clock.
    public static var continuous: WatchdogClock { WatchdogClock(ContinuousClock()) }

    /// Time since the clock was made.
    public var now: Duration { elapsed() }

    /// Suspends until `deadline` (time since the clock was made); throws on cancellation.
    public func sleep(until deadline: Duration) async throws {
        try await sleeper(deadline)
    }
}

import Foundation

/// Real time that the world under test takes, never a wait for something to happen: a slow
/// peer's pace (a header line every 0.5 s), a fleet of devices posting every 2 s, a random
/// moment for a SIGKILL, a trial's deadline in another process that must pass, a window in
/// which something must not happen when no event can tell it. Each call names why.
///
/// A test that waits for an event waits for that event (``Observed``, ``ManualClock``,
/// ``Poll``, a child's line); `Scripts/test-waits` counts every call here as a fixed sleep,
/// shown apart as "world".
public enum WorldTime {
    /// Lets `duration` of real time pass in this task; `why` says what in the world takes it.
    public static func pass(_ duration: Duration, _ why: StaticString) async throws {
        try await Task.sleep(for: duration)
    }

    /// The same on a thread of its own (a peer's or a server's thread, which may block).
    public static func passBlocking(_ duration: Duration, _ why: StaticString) {
        let (seconds, attoseconds) = duration.components
        Thread.sleep(forTimeInterval: Double(seconds) + Double(attoseconds) / 1e18)
    }
}

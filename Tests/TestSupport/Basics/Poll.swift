import Foundation

/// Waits for a condition by polling it, never for a fixed time: returns as soon as
/// `condition` holds, and fails the test naming `what` when it still does not hold at the
/// deadline (generous: it bounds a hang, it measures nothing).
public enum Poll {
    /// - Throws: ``HarnessError`` when `condition` is still false after `timeout` seconds.
    public static func until(
        _ what: String, timeout: Double = 30, every interval: Duration = .milliseconds(10),
        _ condition: () async throws -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        while try await !condition() {
            guard ContinuousClock.now < deadline else { throw HarnessError("timed out after \(timeout) s waiting for \(what)") }
            try await Task.sleep(for: interval)
        }
    }

    /// ``until(_:timeout:every:_:)`` for a thread that may block (a server's, a peer's, one
    /// that runs outside the cooperative pool).
    /// - Throws: ``HarnessError`` when `condition` is still false after `timeout` seconds.
    public static func untilBlocking(
        _ what: String, timeout: Double = 30, every interval: Duration = .milliseconds(10), _ condition: () throws -> Bool
    ) throws {
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        let (seconds, attoseconds) = interval.components
        while try !condition() {
            guard ContinuousClock.now < deadline else { throw HarnessError("timed out after \(timeout) s waiting for \(what)") }
            Thread.sleep(forTimeInterval: Double(seconds) + Double(attoseconds) / 1e18)
        }
    }
}

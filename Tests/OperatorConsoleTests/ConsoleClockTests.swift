import Foundation
import Testing

@testable import OperatorConsole

/// The console's default monotonic clock, which sessions expire on and the login throttle
/// refills on, moves with real time. A clock made afresh at each reading starts at zero
/// every time, so no session would ever expire and a throttled name would stay locked out.
@Suite struct ConsoleClockTests {
    @Test func theDefaultMonotonicClockMovesWithRealTime() throws {
        let console = OperatorConsole(
            configuration: ConsoleConfiguration(
                operators: "/nonexistent/operators.json", collector: "http://127.0.0.1:9/", readToken: "r", adminToken: "a",
                releases: "/nonexistent/releases", signers: { [] }, audit: "/nonexistent/audit.jsonl"))
        let first = console.uptime()
        let start = ContinuousClock.now
        // Waits on the monotonic clock itself for 5 ms of work (a reading of the clock
        // under test is the point, so no test clock stands in for it).
        while ContinuousClock.now - start < .milliseconds(5) {}
        let second = console.uptime()
        #expect(second - first >= .milliseconds(5), "\(first) then \(second)")
    }
}

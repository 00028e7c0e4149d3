import Foundation
import TestSupport
import Testing

/// The suite's own harness: a child that never ends fails its test, and what it started
/// dies with it, so one hung tool (a browser, `xvfb-run`, `apt-get`) cannot hold the
/// whole run until CI's limit.
struct SubprocessTimeoutTests {
    @Test func aChildPastItsTimeoutIsKilledWithWhatItStarted() async throws {
        let marker = FileManager.default.temporaryDirectory.appendingPathComponent("subprocess-timeout-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: marker) }
        // A grandchild that would outlive its parent and write the marker 6 s later; it
        // names itself (`$!`) so the test can await its end rather than sleep past the 6 s.
        let script = "(sleep 6; touch '\(marker)') & echo \"started $!\" >&2; sleep 1000"
        let started = ContinuousClock.now
        let timedOut = await #expect(throws: Subprocess.TimedOut.self) {
            try await Subprocess.run("sh", ["-c", script], gate: nil, timeout: .seconds(2))
        }
        #expect(timedOut.map { $0.killed >= 3 && "\($0)".contains("ran longer than 2.0 seconds") } == true, "\(String(describing: timedOut))")
        // Far below `sleep 1000`, with room for a loaded machine.
        #expect(ContinuousClock.now - started < .seconds(120))
        let grandchild = try #require(
            timedOut?.stderr.split(separator: " ").last.flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) })
        // Killed, it is gone at once; spared, it would end after touching the marker.
        try await Poll.until("the grandchild \(grandchild) to end", timeout: 60) { !ProcessTree.isLive(grandchild) }
        #expect(!FileManager.default.fileExists(atPath: marker), "the grandchild was killed with its parent")
    }

    @Test func aChildThatEndsInTimeIsNotTouched() async throws {
        let result = try await Subprocess.run("sh", ["-c", "echo done"], gate: nil, timeout: .seconds(30))
        #expect(result.status == 0 && result.output == "done\n")
    }
}

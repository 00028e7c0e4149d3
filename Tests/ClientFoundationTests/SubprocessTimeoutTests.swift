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
        // A grandchild that would outlive its parent and write the marker 6 s later.
        let script = "(sleep 6; touch '\(marker)') & echo started >&2; sleep 1000"
        let started = ContinuousClock.now
        await #expect {
            try await Subprocess.run("sh", ["-c", script], gate: nil, timeout: .seconds(2))
        } throws: { error in
            guard let timedOut = error as? Subprocess.TimedOut else { return false }
            return timedOut.killed >= 3 && timedOut.stderr.contains("started") && "\(timedOut)".contains("ran longer than 2.0 seconds")
        }
        // Far below `sleep 1000`, with room for a loaded machine.
        #expect(ContinuousClock.now - started < .seconds(120))
        let waited = ContinuousClock.now - started
        if waited < .seconds(8) { try await Task.sleep(for: .seconds(8) - waited) }
        #expect(!FileManager.default.fileExists(atPath: marker), "the grandchild was killed with its parent")
    }

    @Test func aChildThatEndsInTimeIsNotTouched() async throws {
        let result = try await Subprocess.run("sh", ["-c", "echo done"], gate: nil, timeout: .seconds(30))
        #expect(result.status == 0 && result.output == "done\n")
    }
}

import Foundation
import TestSupport
import Testing

/// The shell's fleet reports (docs/fleet-reports.md#report-types): its start, and a web
/// process killed during a trial, read from the root's journal. In `NativeShellTests` so
/// that one window runs at a time.
extension NativeShellTests {
    /// The journal's reports as dictionaries (JSONSerialization: this target has no StrictJSON).
    static func reportJournal(_ root: String) throws -> [[String: Any]] {
        let text = (try? String(contentsOfFile: root + "/reports/journal.jsonl", encoding: .utf8)) ?? ""
        return try text.split(separator: "\n").map { (line: Substring) -> [String: Any] in
            guard let object = try JSONSerialization.jsonObject(with: Data(String(line).utf8)) as? [String: Any] else {
                throw HarnessError("not a JSON object: \(line)")
            }
            return object
        }
    }

    /// A page killed before it acknowledged: `web-process-died` (crashed) comes before the
    /// trial's `rolled-back` (page-crashed), and the shell's `start` names what was on screen.
    @Test func aKilledWebProcessIsReportedBeforeTheRollback() async throws {
        let rig = try await Self.committedRig(startupTimeout: 30, label: "shell-reports")
        let config = rig.root + "/config.json"
        let configData = try Data(contentsOf: URL(fileURLWithPath: config))
        var settings = try #require(try JSONSerialization.jsonObject(with: configData) as? [String: Any])
        settings["reportURL"] = "http://127.0.0.1:9/"
        try JSONSerialization.data(withJSONObject: settings, options: [.sortedKeys]).write(to: URL(fileURLWithPath: config))
        chmod(config, 0o644)
        try await rig.publish("1.1.0", script: ShellHarness.paint(Self.red))  // never acknowledges
        try await rig.run(["install", "--root", rig.root])
        let shell = try RunningShell(root: rig.root, exitAfter: 180, arguments: [], scratch: rig.tmp.path)
        try await shell.waitFor("the trial's first paint") { events in
            events.contains { $0.event == "firstPaint" } && events.contains { $0.kind == "trialStarted" && $0.version == "1.1.0" }
        }
        try Self.killWebProcess(of: shell)
        // Until the engine has failed the trial for the crash (the shell reports the death
        // once `pageCrashed` returned), not for a fixed 12 s.
        let run = try await shell.stop(when: "the web process's death to fail 1.1.0's trial") { events in
            events.contains { $0.event == "webProcessTerminated" && $0.trialFailed == true }
        }
        #expect(run.status == 0, "\(run.summary)")
        let reports = try Self.reportJournal(rig.root)
        let types: [String] = reports.compactMap { $0["type"] as? String }
        let start = try #require(reports.first { $0["type"] as? String == "start" }, "\(types)")
        #expect(start["running"] as? String == "1.1.0", "the pending version went on screen: \(start)")
        let died = try #require(reports.firstIndex { $0["type"] as? String == "web-process-died" }, "\(types)")
        let death = reports[died]
        #expect(death["reason"] as? String == "crashed", "\(death)")
        #expect(death["running"] as? String == "1.1.0", "\(death)")
        let rolledBack = try #require(reports.firstIndex { $0["type"] as? String == "rolled-back" }, "\(types)")
        #expect(died < rolledBack, "\(types)")
        let rollback = reports[rolledBack]
        #expect(rollback["reason"] as? String == "page-crashed", "\(rollback)")
        #expect(rollback["version"] as? String == "1.1.0", "\(rollback)")
    }
}

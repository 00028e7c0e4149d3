import ClientFoundation
import FleetReports
import Foundation
import TestSupport
import Testing

/// A device that allows it (`clientctl init --error-rollback`) rolls back on its own a
/// release whose page fails on most of its loads in its first hour of use
/// (docs/page-errors.md#local-rollback), under a real `clientctl serve`: the page's shim
/// acknowledges each load and posts its errors (`POST /__clientctl/problems`, as the shim
/// does), and serve goes back to the release before, blacklists it and reports why.
/// Without the setting the same page keeps its release and is only reported.
@Suite(.serialized) struct ErrorRollbackServeTests {
    /// A root on 1.1.0, committed after 1.0.0, reporting to an address nobody answers.
    static func rig(_ flags: [String], label: String) async throws -> ReleaseRig {
        let rig = try await ReleaseRig(label: label, initArguments: ["--report-url", "http://127.0.0.1:9/"] + flags)
        for version in ["1.0.0", "1.1.0"] {
            try await rig.publish(version, script: ReleaseRig.acknowledging)
            try await rig.run(["install", "--root", rig.root])
            try await rig.run(["reload", "--root", rig.root])
            try await rig.run(["ack", "--root", rig.root])
        }
        let status = try await rig.status()
        #expect(status.current == .installed("1.1.0") && status.lastKnownGood == "1.1.0", "\(status)")
        return rig
    }

    /// Three loads of 1.1.0 acknowledge; the first and the third throw.
    static func failingLoads(_ serve: ServeProcess) async throws {
        let url = serve.baseURL + "__clientctl/problems"
        let headers = ["X-Clientctl-Shim: 1", "Content-Type: application/json"]
        for load in 0..<3 {
            let ack = try await serve.control("startup-complete")
            #expect(ack.status == 200, "\(ack.status) \(ack.body)")
            guard load != 1 else { continue }
            let body = Data(#"{"errors":5,"messages":["TypeError: x is undefined @ /app.js:3"],"version":"1.1.0"}"#.utf8)
            let posted = try await Curl.request(url, method: "POST", headers: headers, body: body)
            #expect(posted.status / 100 == 2, "\(posted.status) \(posted.body)")
        }
    }

    static func journal(_ rig: ReleaseRig) throws -> [String] {
        let text = (try? String(contentsOfFile: rig.root + "/reports/journal.jsonl", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map(String.init)
    }

    @Test func aReleaseFailingItsFirstHourGoesBackWhenTheDeviceAllowsIt() async throws {
        let rig = try await Self.rig(["--error-rollback"], label: "error-rollback")
        let config = try String(contentsOfFile: rig.root + "/config.json", encoding: .utf8)
        #expect(config.contains("\"errorRollback\" : true"), "\(config)")
        let serve = try await ServeProcess(root: rig.root, scratch: rig.tmp.path)
        try await Self.failingLoads(serve)
        let status = try await rig.waitForStatus { $0.current == .installed("1.0.0") }
        #expect(status.blacklist.contains("1.1.0"), "\(status)")
        // The state is written before the rollback's reports are: wait for them too.
        try await Poll.until("the rollback reported") { try Self.journal(rig).contains { $0.contains("\"type\":\"rolled-back\"") } }
        #expect(serve.stop(SIGTERM) == 0, "\(serve.stderr)")
        let lines = try Self.journal(rig)
        let rolledBack = lines.first { $0.contains("\"type\":\"rolled-back\"") && $0.contains("\"version\":\"1.1.0\"") }
        #expect(rolledBack?.contains("\"reason\":\"page-errors\"") == true, "\(lines)")
        let counted = lines.first { $0.contains("\"type\":\"page-errors\"") && $0.contains("\"version\":\"1.1.0\"") }
        #expect(counted?.contains("\"count\":10") == true, "\(lines)")
        let explain = try await rig.run(["status", "--root", rig.root, "--explain"])
        #expect(explain.output.contains("its page failed on most of its loads in its first hour"), "\(explain.output)")
    }

    @Test func withoutTheSettingTheReleaseStaysAndIsReported() async throws {
        let rig = try await Self.rig([], label: "error-stays")
        let serve = try await ServeProcess(root: rig.root, scratch: rig.tmp.path)
        try await Self.failingLoads(serve)
        #expect(serve.stop(SIGTERM) == 0, "\(serve.stderr)")
        let status = try await rig.status()
        #expect(status.current == .installed("1.1.0") && !status.blacklist.contains("1.1.0"), "\(status)")
        // Stopped within its first 5 minutes: the period is kept for the next start.
        let kept = try String(contentsOfFile: rig.root + "/reports/page-errors.json", encoding: .utf8)
        #expect(kept.contains("\"problems\":10") && kept.contains("\"version\":\"1.1.0\""), "\(kept)")
        #expect(!(try Self.journal(rig)).contains { $0.contains("\"type\":\"rolled-back\"") })
    }
}

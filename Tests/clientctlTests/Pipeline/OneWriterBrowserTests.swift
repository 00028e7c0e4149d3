import ClientShim
import ClientUpdater
import Foundation
import TestSupport
import Testing

/// Issue 9 with real processes: `clientctl serve`, the command line beside it, and pages
/// loaded in headless Chromium. One truth per root: the version `state.json` calls
/// current is always the version serve serves; only pages of the version on trial, on
/// serve's own origin, can acknowledge it.
@Suite(.serialized) struct OneWriterBrowserTests {

    /// The version in the page serve answers `/` with.
    static func servedVersion(_ serve: ServeProcess) async throws -> String? {
        await Chromium.text(of: "version", in: try serve.get("/").body)
    }

    /// `state.json`'s current version is the one serve serves; returns it.
    @discardableResult
    static func expectOneTruth(
        _ rig: ReleaseRig, _ serve: ServeProcess, _ expected: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> StatusReport {
        let status = try await rig.status()
        #expect(status.current.description == expected, "state.json", sourceLocation: sourceLocation)
        await #expect(try servedVersion(serve) == expected, "served", sourceLocation: sourceLocation)
        return status
    }

    /// A POST as a page's shim sends it, naming `version` in the body.
    static func post(_ serve: ServeProcess, _ name: String, version: String) async throws -> CurlResponse {
        try await Curl.request(
            serve.baseURL + "__clientctl/" + name, method: "POST",
            headers: ["X-Clientctl-Shim: 1", "Content-Type: application/json"], body: Data(#"{"version":"\#(version)"}"#.utf8))
    }

    @Test
    func serveIsTheOnlyWriterAndStateNamesWhatItServes() async throws {
        // No trial here may time out: 1.1.0 stays on trial through a publish, an install and
        // five refused commands, which took over 30 s beside the whole suite on 2 cores.
        let rig = try await ReleaseRig(startupTimeout: 300, label: "one-writer")
        try await rig.publish("1.0.0", script: ReleaseRig.acknowledging)
        try await rig.run(["install", "--root", rig.root])
        let serve = try await ServeProcess(root: rig.root, scratch: rig.tmp.path)
        var dom = try await Chromium.dumpDOM(serve.baseURL)
        #expect(Chromium.text(of: "version", in: dom) == "1.0.0" && Chromium.text(of: "acked", in: dom) == "yes")
        _ = try await rig.waitForStatus { $0.lastKnownGood == "1.0.0" }
        try await Self.expectOneTruth(rig, serve, "1.0.0")

        // 1.1.0 goes on trial through serve.
        try await rig.publish("1.1.0", script: ReleaseRig.acknowledging)
        await #expect(try serve.control("check").status == 200)
        await #expect(try serve.control("switch-to-pending").status == 200)
        await #expect(try Self.expectOneTruth(rig, serve, "1.1.0").trial?.version == "1.1.0")

        // An old tab of 1.0.0 acknowledges (or asks to switch): refused, the trial goes on.
        let oldAck = try await Self.post(serve, "startup-complete", version: "1.0.0")
        #expect(oldAck.status == 409 && oldAck.body.contains("1.1.0 is on trial, not 1.0.0"), "\(oldAck)")
        var status = try await Self.expectOneTruth(rig, serve, "1.1.0")
        #expect(status.trial?.version == "1.1.0" && status.lastKnownGood == "1.0.0")

        // cron's `install` beside serve only stages: allowed.
        try await rig.publish("1.2.0", script: ReleaseRig.acknowledging)
        try await rig.run(["install", "--root", rig.root])
        await #expect(try Self.expectOneTruth(rig, serve, "1.1.0").pending == "1.2.0")
        let oldSwitch = try await Self.post(serve, "switch-to-pending", version: "1.0.0")
        #expect(oldSwitch.status == 409, "\(oldSwitch)")

        // The watchdog's writers from the command line are refused while serve runs.
        let stateBefore = FileManager.default.contents(atPath: rig.root + "/state.json")
        for command in [["reload"], ["ack"], ["ack", "--version", "1.1.0"], ["rollback"], ["gc"]] {
            let refused = try await ClientctlBinary.run(command + ["--root", rig.root])
            #expect(refused.status == 75, "\(command): \(refused.errorOutput)")
            #expect(
                refused.errorOutput.contains("clientctl serve (pid \(serve.pid), control endpoints \(serve.baseURL)__clientctl/)"),
                "\(command): \(refused.errorOutput)")
            try await Self.expectOneTruth(rig, serve, "1.1.0")
        }
        #expect(FileManager.default.contents(atPath: rig.root + "/state.json") == stateBefore, "state.json untouched")

        // The 1.1.0 page itself acknowledges its own version: committed.
        dom = try await Chromium.dumpDOM(serve.baseURL)
        #expect(Chromium.text(of: "version", in: dom) == "1.1.0" && Chromium.text(of: "acked", in: dom) == "yes")
        _ = try await rig.waitForStatus { $0.lastKnownGood == "1.1.0" }
        try await Self.expectOneTruth(rig, serve, "1.1.0")

        // The current page switches to the pending version through serve.
        await #expect(try Self.post(serve, "switch-to-pending", version: "1.1.0").status == 200)
        try await Self.expectOneTruth(rig, serve, "1.2.0")
        dom = try await Chromium.dumpDOM(serve.baseURL)
        #expect(Chromium.text(of: "version", in: dom) == "1.2.0" && Chromium.text(of: "acked", in: dom) == "yes")
        _ = try await rig.waitForStatus { $0.lastKnownGood == "1.2.0" }
        try await Self.expectOneTruth(rig, serve, "1.2.0")

        // Once serve has stopped, the command line writes again.
        #expect(serve.stop(SIGTERM) == 0, "\(serve.stderr)")
        #expect(!FileManager.default.fileExists(atPath: rig.root + "/agent.json"))
        try await rig.run(["gc", "--root", rig.root])
        try await rig.run(["rollback", "--root", rig.root])
        status = try await rig.status()
        #expect(status.current != .installed("1.2.0") && status.blacklist == ["1.2.0"], "\(status)")
    }

    /// Issue 9 point 3: a device driven by cron (`clientctl install`) beside `serve` gets
    /// the retry of a version whose trial failed once, as serve's own check would give it.
    @Test func cronsInstallStagesTheRetryBesideServe() async throws {
        let rig = try await ReleaseRig(startupTimeout: 600, label: "cron-retry")  // the kill ends the trial
        try await rig.publish("1.0.0", script: ReleaseRig.acknowledging)
        try await rig.run(["install", "--root", rig.root])
        var serve = try await ServeProcess(root: rig.root, scratch: rig.tmp.path)
        await #expect(try Self.post(serve, "startup-complete", version: "1.0.0").status == 200)
        try await rig.publish("1.1.0", script: ReleaseRig.acknowledging)
        try await rig.run(["install", "--root", rig.root])
        await #expect(try Self.post(serve, "switch-to-pending", version: "1.0.0").status == 200)
        #expect(serve.stop(SIGKILL) == 128 + SIGKILL)
        serve = try await ServeProcess(root: rig.root, scratch: rig.tmp.path)
        var status = try await Self.expectOneTruth(rig, serve, "1.0.0")
        #expect(status.retry == ["1.1.0"] && status.pending == nil, "the trial failed once: \(status)")

        let install = try await rig.run(["install", "--root", rig.root, "--json"])
        let report = try JSONDecoder().decode(InstallReport.self, from: install.stdout)
        #expect(report.result == .staged && report.version == "1.1.0" && report.pending == "1.1.0", "\(report)")
        status = try await Self.expectOneTruth(rig, serve, "1.0.0")
        #expect(status.pending == "1.1.0" && status.lastCheck?.result == "staged")
        #expect(serve.stop(SIGTERM) == 0)
    }

    /// `clientctl ack --version V` (no serve): another version on trial is refused with
    /// 65 and the trial goes on; the right version commits; without `--version` as before.
    @Test func ackWithAVersionCommitsOnlyThatVersion() async throws {
        let rig = try await ReleaseRig(startupTimeout: 600, label: "ack-version")  // ack ends the trial
        try await rig.publish("1.0.0", script: "")
        try await rig.run(["install", "--root", rig.root])
        try await rig.run(["reload", "--root", rig.root])
        let stateBefore = FileManager.default.contents(atPath: rig.root + "/state.json")
        let wrong = try await ClientctlBinary.run(["ack", "--root", rig.root, "--version", "0.9.0"])
        #expect(wrong.status == 65, "\(wrong.errorOutput)")
        #expect(wrong.errorOutput.contains("startup complete of 0.9.0 refused: 1.0.0 is on trial, not 0.9.0"), "\(wrong.errorOutput)")
        #expect(FileManager.default.contents(atPath: rig.root + "/state.json") == stateBefore, "state.json untouched")
        try await rig.run(["ack", "--root", rig.root, "--version", "1.0.0"])
        await #expect(try rig.status().lastKnownGood == "1.0.0")

        try await rig.publish("1.1.0", script: "")
        try await rig.run(["install", "--root", rig.root])
        try await rig.run(["reload", "--root", rig.root])
        try await rig.run(["ack", "--root", rig.root])
        await #expect(try rig.status().lastKnownGood == "1.1.0", "without --version: the current version")
    }

    /// DNS rebinding: a site whose name resolves to 127.0.0.1 loads from serve's socket
    /// (Chromium's `--host-resolver-rules` plays the rebound DNS), and a page of another
    /// local origin posts to serve. Neither reaches the watchdog; the real page does.
    @Test
    func aRebindingSiteOrAnotherOriginCannotAcknowledge() async throws {
        let rig = try await ReleaseRig(startupTimeout: 300, label: "rebinding")
        try await rig.publish("1.0.0", script: ReleaseRig.acknowledging)
        try await rig.run(["install", "--root", rig.root])
        let serve = try await ServeProcess(root: rig.root, scratch: rig.tmp.path)
        await #expect(try rig.status().trial?.version == "1.0.0")

        let rebound = try await Chromium.dumpDOM(
            "http://evil.example:\(serve.port)/",
            extraArguments: ["--host-resolver-rules=MAP evil.example 127.0.0.1"])
        #expect(Chromium.text(of: "version", in: rebound) == nil, "serve's page is not served under another name: \(rebound)")
        #expect(rebound.contains("Host evil.example:\(serve.port) is not this server"), "\(rebound)")
        await #expect(try rig.status().trial?.version == "1.0.0")

        // A page of a second local server (another port: another origin) posts to serve.
        let target = serve.baseURL + "__clientctl/startup-complete"
        let attack = ReleaseRig.page(
            version: "attacker",
            script: """
                var marks = 0;
                function mark(id, text) { var p = document.createElement('p'); p.id = id; p.textContent = text; document.body.appendChild(p); }
                fetch('\(target)', { method: 'POST', mode: 'no-cors', headers: { 'Content-Type': 'text/plain' }, body: '{"version":"1.0.0"}' })
                  .then(function () { mark('simple', 'sent'); }, function () { mark('simple', 'failed'); });
                fetch('\(target)', { method: 'POST', headers: { 'X-Clientctl-Shim': '1' }, body: '{"version":"1.0.0"}' })
                  .then(function (r) { mark('preflighted', 'answered ' + r.status); }, function () { mark('preflighted', 'blocked'); });
                """)
        let other = try LoopbackHTTPServer { _ in
            LoopbackResponse(status: 200, headers: [("Content-Type", "text/html; charset=utf-8")], body: .data(attack))
        }
        defer { other.stop() }
        let attacked = try await Chromium.dumpDOM(other.url("/attack.html").absoluteString)
        #expect(Chromium.text(of: "version", in: attacked) == "attacker")
        #expect(Chromium.text(of: "simple", in: attacked) == "sent", "the browser sent the no-cors POST: \(attacked)")
        #expect(Chromium.text(of: "preflighted", in: attacked) == "blocked", "no CORS grant for the shim header")
        var status = try await rig.status()
        #expect(status.trial?.version == "1.0.0" && status.lastKnownGood == nil, "nothing acknowledged 1.0.0")

        // The page on serve's own origin acknowledges.
        let dom = try await Chromium.dumpDOM(serve.baseURL)
        #expect(Chromium.text(of: "acked", in: dom) == "yes")
        status = try await rig.waitForStatus { $0.lastKnownGood == "1.0.0" }
        #expect(status.trial == nil)
        #expect(serve.stop(SIGTERM) == 0)
    }
}

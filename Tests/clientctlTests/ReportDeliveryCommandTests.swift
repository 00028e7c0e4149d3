import ClientUpdater
import DeviceSetup
import Foundation
import TestSupport
import Testing

/// Delivery as a user sees it, with the real binary: `init --report-url`, `install` and `ack`
/// delivering what is pending before they exit, within their bound, and nothing at all
/// without a report URL (docs/fleet-reports.md#delivery).
@Suite struct ReportDeliveryCommandTests {
    /// The JSON reports of every POST, decompressed by the `zstd` command-line tool.
    static func reports(_ stub: ReportCollectorStub) throws -> [[String: Any]] {
        try stub.received.flatMap { post -> [[String: Any]] in
            #expect(post.path == "/v1/reports" && post.headers["content-encoding"] == "zstd")
            let plain = try Subprocess.run("/usr/bin/zstd", ["-d", "-c", "-q"], input: post.body)
            let object = try #require(try JSONSerialization.jsonObject(with: plain.stdout) as? [String: Any])
            return try #require(object["reports"] as? [[String: Any]])
        }
    }

    /// A device whose config reports to a stub collector, with 1.0.0 published.
    static func reportingDevice() throws -> (DeviceFixture, ReportCollectorStub) {
        let f = try DeviceFixture()
        let stub = try ReportCollectorStub()
        f.config.reportURL = stub.baseURL
        try f.config.save(f.layout)
        try f.publish("1.0.0")
        return (f, stub)
    }

    @Test func installDeliversPendingReportsBeforeItExits() async throws {
        let (f, stub) = try Self.reportingDevice()
        // Reports already waiting (a previous run whose collector was down).
        let journal = ReportJournal(layout: f.layout)
        journal.record(ReportDraft(.start, running: "seed"))
        journal.record(ReportDraft(.heartbeat, running: "seed"))
        let install = try await ClientctlBinary.run(["install", "--root", f.layout.root])
        #expect(install.status == 0, "\(install.errorOutput)")
        let sent = try Self.reports(stub)
        #expect(sent.count >= 2, "\(sent)")
        #expect(sent.prefix(2).map { $0["type"] as? String } == ["start", "heartbeat"])
        let seqs = sent.compactMap { $0["seq"] as? Int }
        #expect(seqs == Array(1...seqs.count), "every report once, in order: \(seqs)")
        #expect(journal.status.pending == 0, "delivered reports leave the journal")
    }

    @Test func aCollectorThatIsDownKeepsReportsForTheNextRun() async throws {
        let f = try DeviceFixture()
        let refusing = try LoopbackHTTPServer.refusingPort()
        f.config.reportURL = "http://127.0.0.1:\(refusing.port)/"
        try f.config.save(f.layout)
        try f.publish("1.0.0")
        let journal = ReportJournal(layout: f.layout)
        journal.record(ReportDraft(.start, running: "seed"))
        let first = try await ClientctlBinary.run(["install", "--root", f.layout.root])
        #expect(first.status == 0, "the collector being down is not the check's failure: \(first.errorOutput)")
        #expect(journal.status.pending >= 1, "nothing lost")
        #expect(journal.status.lastAttempt?.failure?.contains("refused") == true, "\(String(describing: journal.status.lastAttempt))")
        let stub = try ReportCollectorStub()
        f.config.reportURL = stub.baseURL
        try f.config.save(f.layout)
        _ = try await ClientctlBinary.run(["install", "--root", f.layout.root])
        let sent = try Self.reports(stub)
        #expect(sent.first?["type"] as? String == "start" && sent.first?["seq"] as? Int == 1, "\(sent)")
        #expect(journal.status.pending == 0)
    }

    /// A heartbeat opens no request of its own: `install` leaves it, `status` says until when
    /// it waits, and the next report that matters takes it along in one request.
    @Test func aHeartbeatWaitsForCompanyAndStatusSaysUntilWhen() async throws {
        let (f, stub) = try Self.reportingDevice()
        let first = try await ClientctlBinary.run(["install", "--root", f.layout.root])
        #expect(first.status == 0, "\(first.errorOutput)")
        let requests = stub.received.count
        #expect(requests >= 1, "the install's reports matter: sent at once")
        let journal = ReportJournal(layout: f.layout)
        journal.record(ReportDraft(.heartbeat, running: "1.0.0"))
        let again = try await ClientctlBinary.run(["install", "--root", f.layout.root])
        #expect(again.status == 0, "\(again.errorOutput)")
        #expect(stub.received.count == requests, "a heartbeat alone is held")
        let text = try await ClientctlBinary.run(["status", "--root", f.layout.root])
        #expect(text.output.contains("1 pending (held until "), "\(text.output)")
        let json = try await ClientctlBinary.run(["status", "--root", f.layout.root, "--json"])
        let status = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        let reports = try #require(status["reports"] as? [String: Any])
        #expect(reports["pending"] as? Int == 1 && reports["heldUntil"] is String, "\(reports)")
        journal.record(ReportDraft(.start, running: "1.0.0"))
        _ = try await ClientctlBinary.run(["install", "--root", f.layout.root])
        #expect(stub.received.count == requests + 1, "one request for both")
        let last = try Self.reports(stub).suffix(2).map { $0["type"] as? String }
        #expect(last == ["heartbeat", "start"], "\(last)")
        #expect(journal.status.pending == 0 && journal.status.heldUntil == nil)
    }

    @Test func aSlowCollectorDoesNotHoldInstallPastItsBound() async throws {
        let f = try DeviceFixture()
        let stub = try ReportCollectorStub()
        stub.script([], otherwise: .after(seconds: 120, .ok))
        f.config.reportURL = stub.baseURL
        try f.config.save(f.layout)
        try f.publish("1.0.0")
        ReportJournal(layout: f.layout).record(ReportDraft(.start, running: "seed"))
        let start = ContinuousClock.now
        let install = try await ClientctlBinary.run(["install", "--root", f.layout.root, "--json"])
        let took = ContinuousClock.now - start
        #expect(install.status == 0, "\(install.errorOutput)")
        #expect(String(decoding: install.stdout, as: UTF8.self).contains("1.0.0"), "the check itself was done")
        #expect(took < .seconds(90), "the collector answers after 120 s; install took \(took)")
        #expect(stub.received.count >= 1, "it tried")
        #expect(ReportJournal(layout: f.layout).status.pending >= 1, "the rest stays for the next run")
    }

    @Test func ackDeliversWhatItRecorded() async throws {
        let (f, stub) = try Self.reportingDevice()
        #expect(try await ClientctlBinary.run(["install", "--root", f.layout.root]).status == 0)
        #expect(try await ClientctlBinary.run(["reload", "--root", f.layout.root]).status == 0)
        let before = stub.received.count
        ReportJournal(layout: f.layout).record(ReportDraft(.trialStarted, running: "1.0.0", version: "1.0.0"))
        let ack = try await ClientctlBinary.run(["ack", "--root", f.layout.root])
        #expect(ack.status == 0, "\(ack.errorOutput)")
        #expect(stub.received.count > before, "ack sent before it exited")
        #expect(ReportJournal(layout: f.layout).status.pending == 0)
    }

    @Test func noReportURLSendsNothingAndRecordsNothing() async throws {
        let f = try DeviceFixture()
        try f.publish("1.0.0")
        let install = try await ClientctlBinary.run(["install", "--root", f.layout.root])
        #expect(install.status == 0, "\(install.errorOutput)")
        let reload = try await ClientctlBinary.run(["reload", "--root", f.layout.root])
        #expect(reload.status == 0, "\(reload.errorOutput)")
        let ack = try await ClientctlBinary.run(["ack", "--root", f.layout.root])
        #expect(ack.status == 0, "\(ack.errorOutput)")
        #expect(!FileManager.default.fileExists(atPath: f.layout.root + "/reports"), "no journal grows")
    }

    @Test func initTakesAReportURLAndRefusesABadOne() async throws {
        let tmp = try TemporaryDirectory("report-url")
        let key = ClientctlBinary.packagePath("Keys/test-signing.pub.pem")
        func initRoot(_ dir: String, _ url: String) async throws -> Subprocess.Result {
            try await ClientctlBinary.run([
                "init", "--root", tmp(dir), "--app", "com.example.notes", "--channel", "stable",
                "--manifest-url", "http://127.0.0.1:9/stable/manifest.json", "--trust", key, "--shell-version", "1.0.0",
                "--report-url", url,
            ])
        }
        let ok = try await initRoot("good", "http://127.0.0.1:9400/")
        #expect(ok.status == 0, "\(ok.errorOutput)")
        let config = try DeviceConfig.load(RootLayout(root: tmp("good")))
        #expect(config.reportURL == "http://127.0.0.1:9400/")
        for bad in ["http://collector.example.com/", "ftp://127.0.0.1/", "https://u:p@reports.example.com/", "https://x.example/?a=1"] {
            let refused = try await initRoot("bad", bad)
            #expect(refused.status == 64, "\(bad): \(refused.errorOutput)")
            #expect(refused.errorOutput.contains("--report-url"), "\(refused.errorOutput)")
            #expect(!FileManager.default.fileExists(atPath: tmp("bad") + "/config.json"), "nothing written")
        }
    }
}

import ClientUpdater
import DeviceSetup
import Foundation
import TestSupport
import Testing

/// Labels from a device's `config.json` to `fleet status --label`, with the real binaries and
/// a real `clientctl collect` (docs/fleet-reports.md#one-cohorts-figures): every batch
/// carries the labels the device's config has when it is sent, signed with the rest; the
/// collector keeps each device's latest; `fleet status` and `fleet devices` show one cohort.
@Suite struct FleetLabelsTests {
    /// Runs `clientctl install` until the journal has nothing pending, at most 60 s.
    static func deliverAll(_ f: DeviceFixture) async throws {
        let deadline = Date().addingTimeInterval(60)
        repeat {
            let install = try await ClientctlBinary.run(["install", "--root", f.layout.root])
            #expect(install.status == 0, "\(install.errorOutput)")
        } while ReportJournal(layout: f.layout).status.pending > 0 && Date() < deadline
        #expect(ReportJournal(layout: f.layout).status.pending == 0, "delivered within 60 s")
    }

    /// A device reporting to `collector` with `labels` in its config, 1.0.0 published and installed.
    static func device(_ collector: CollectProcess, _ labels: [String: String]) async throws -> DeviceFixture {
        let f = try DeviceFixture()
        f.config.reportURL = collector.baseURL
        for (key, value) in labels { try f.config.labels.set(key, value) }
        try f.config.save(f.layout)
        try f.publish("1.0.0")
        try await deliverAll(f)
        return f
    }

    static func fleet(_ collector: CollectProcess, _ command: String, _ labels: [String], _ extra: [String] = []) async throws -> Subprocess.Result {
        let scope = command == "status" ? ["--app", "com.example.notes", "--channel", "stable"] : []
        return try await ClientctlBinary.run(
            ["fleet", command, "--collector", collector.baseURL, "--token-file", collector.tokenPath] + scope + labels.flatMap { ["--label", $0] }
                + extra, environment: ["COLUMNS": "100"])
    }

    /// `fleet status --json`'s devices, and the installs of 1.0.0.
    static func figures(_ collector: CollectProcess, _ labels: [String]) async throws -> [Int] {
        let run = try await fleet(collector, "status", labels, ["--json"])
        #expect(run.status == 0, "\(run.errorOutput)")
        let object = try #require(try JSONSerialization.jsonObject(with: run.stdout) as? [String: Any])
        let versions = object["versions"] as? [[String: Any]] ?? []
        let installs = versions.first { $0["version"] as? String == "1.0.0" }?["installs"] as? Int ?? 0
        return [object["devices"] as? Int ?? -1, installs]
    }

    @Test func devicesSendTheirConfigsLabelsAndFleetStatusShowsOneCohort() async throws {
        let dir = try TemporaryDirectory("fleet-labels")
        let collector = try await CollectProcess(database: "sqlite:" + dir("reports.db"), scratch: dir.path)
        let beta = try await Self.device(collector, ["store": "12", "ring": "beta"])
        let twelve = try await Self.device(collector, ["store": "12"])
        _ = try await Self.device(collector, ["store": "13"])
        let ids = try [beta, twelve].map { try #require(DeviceIdFile.read($0.layout)?.text) }

        let store12 = try await Self.fleet(collector, "status", ["store=12"])
        #expect(store12.status == 0, "\(store12.errorOutput)")
        #expect(store12.output.hasPrefix("com.example.notes · stable · labels store=12: 2 devices,"), "\(store12.output)")
        #expect(store12.output.split(separator: "\n").contains { $0.hasPrefix("1.0.0 ") }, "\(store12.output)")
        #expect(try await Self.figures(collector, ["store=12"]) == [2, 2])
        #expect(try await Self.figures(collector, ["store=13"]) == [1, 1])
        #expect(try await Self.figures(collector, ["ring=beta", "store=12"]) == [1, 1])
        #expect(try await Self.figures(collector, []) == [3, 3])

        let listed = try await Self.fleet(collector, "devices", ["ring=beta"])
        #expect(listed.status == 0, "\(listed.errorOutput)")
        let lines = listed.output.split(separator: "\n")
        #expect(lines.first == "admission: open; 1 accepted, 0 pending, 0 rejected (labels ring=beta)", "\(listed.output)")
        // The table: a header and one device, its labels last (LABELS fits 100 columns).
        let rows = lines.filter { $0.hasPrefix("accepted ") || $0.hasPrefix("pending ") || $0.hasPrefix("rejected ") }
        #expect(lines.dropFirst().first?.hasPrefix("STATUS ") == true && lines.dropFirst().first?.hasSuffix("  LABELS") == true, "\(listed.output)")
        #expect(rows.count == 1 && rows.first?.contains(ids[0]) == true, "\(listed.output)")
        #expect(rows.first?.hasSuffix("  ring=beta,store=12") == true, "\(listed.output)")

        // The second device moves to store 14: its next batch says so, and its figures follow.
        try twelve.config.labels.set("store", "14")
        try twelve.config.save(twelve.layout)
        ReportJournal(layout: twelve.layout).record(ReportDraft(.start, running: "1.0.0"))
        try await Self.deliverAll(twelve)
        #expect(try await Self.figures(collector, ["store=12"]) == [1, 1])
        #expect(try await Self.figures(collector, ["store=14"]) == [1, 1])
        let all = try await Self.fleet(collector, "devices", [])
        #expect(all.output.split(separator: "\n").contains { $0.contains(ids[1]) && $0.hasSuffix("  store=14") }, "\(all.output)")
        #expect(collector.stop() == 0)
    }
}

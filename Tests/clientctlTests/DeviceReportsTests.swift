import ClientUpdater
import Foundation
import StrictJSON
import TestSupport
import Testing

/// The fleet reports a device records (docs/fleet-reports.md#report-types), driven through
/// the built `clientctl` and read from the journal file `<root>/reports/journal.jsonl`.
/// The report URL names a loopback port nothing listens on, so whatever delivery tries
/// fails and every report stays in the journal.
@Suite struct DeviceReportsTests {
    static let reportURL = "http://127.0.0.1:9/"

    /// A rig whose root reports (its config gets a report URL).
    static func rig(startupTimeout: Double = 10) async throws -> ReleaseRig {
        let rig = try await ReleaseRig(startupTimeout: startupTimeout, label: "reports")
        try Self.setReportURL(rig.root)
        return rig
    }

    static func setReportURL(_ root: String) throws {
        let path = root + "/config.json"
        var config = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        config["reportURL"] = reportURL
        try JSONSerialization.data(withJSONObject: config, options: [.sortedKeys]).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o644)
    }

    /// The journal's reports, each as its JSON object.
    static func journal(_ root: String) throws -> [JSONObject] {
        let text = (try? String(contentsOfFile: root + "/reports/journal.jsonl", encoding: .utf8)) ?? ""
        return try text.split(separator: "\n").map { line in
            guard case .object(let object) = try StrictJSON.parse(Array(line.utf8)) else { throw HarnessError("not an object: \(line)") }
            return object
        }
    }

    static func string(_ report: JSONObject, _ key: String) -> String? {
        if case .string(let s)? = report[key] { return s }
        return nil
    }

    static func types(_ reports: [JSONObject]) -> [String] { reports.compactMap { string($0, "type") } }

    static func find(_ reports: [JSONObject], _ type: String) -> JSONObject? {
        reports.first { string($0, "type") == type }
    }

    @Test func anInstallThenACommitAreReportedWithSequenceAndShell() async throws {
        let rig = try await Self.rig()
        try await rig.publish("1.0.0", script: ReleaseRig.acknowledging)
        try await rig.run(["install", "--root", rig.root])
        try await rig.run(["reload", "--root", rig.root])
        try await rig.run(["ack", "--root", rig.root])
        let reports = try Self.journal(rig.root)
        let types = Self.types(reports)
        for type in ["update-found", "downloaded", "installed", "trial-started", "committed"] {
            #expect(types.contains(type), "\(types)")
        }
        #expect(types.firstIndex(of: "installed")! < types.firstIndex(of: "committed")!)
        let committed = try #require(Self.find(reports, "committed"))
        #expect(Self.string(committed, "version") == "1.0.0")
        #expect(Self.string(committed, "running") == "1.0.0")
        #expect(Self.string(committed, "shell") == "1.0.0")
        guard case .integer(let ms)? = committed["ms"] else { throw HarnessError("committed has no ms: \(committed)") }
        #expect(ms >= 0)
        let downloaded = try #require(Self.find(reports, "downloaded"))
        #expect(Self.string(downloaded, "via") == "archive")
        let seqs = reports.compactMap { r -> Int64? in
            if case .integer(let n)? = r["seq"] { return n }
            return nil
        }
        #expect(seqs == Array(1...Int64(seqs.count)))
        // status shows them as pending.
        let status = try await rig.status()
        #expect(status.reports?.pending == reports.count)
        #expect(status.reports?.dropped == 0)
        let text = try await rig.run(["status", "--root", rig.root])
        #expect(String(decoding: text.stdout, as: UTF8.self).contains("reports:         \(reports.count) pending, 0 dropped"))
    }

    @Test func aPageThatNeverAcknowledgesIsRolledBackThenBlacklisted() async throws {
        let rig = try await Self.rig(startupTimeout: 1)
        try await rig.publish("1.0.0", script: "")
        for _ in 0..<2 {
            try await rig.run(["install", "--root", rig.root])
            try await rig.run(["reload", "--root", rig.root])
            try await WorldTime.pass(.seconds(2), "the trial's 1 s start-up timeout, in another process, must pass")
            try await rig.run(["gc", "--root", rig.root])  // the next command fails the timed-out trial
        }
        let reports = try Self.journal(rig.root)
        let types = Self.types(reports)
        #expect(types.filter { $0 == "trial-started" }.count == 2, "\(types)")
        let rolledBack = reports.filter { Self.string($0, "type") == "rolled-back" }
        #expect(rolledBack.count == 2)
        #expect(rolledBack.allSatisfy { Self.string($0, "reason") == "timed-out" && Self.string($0, "version") == "1.0.0" })
        #expect(rolledBack.allSatisfy { Self.string($0, "running") != "1.0.0" }, "back on the seed: \(rolledBack)")
        let blacklisted = try #require(Self.find(reports, "blacklisted"))
        #expect(Self.string(blacklisted, "version") == "1.0.0" && Self.string(blacklisted, "reason") == "timed-out")
    }

    @Test func aReleaseWithABadSignatureIsRefusedWithItsReason() async throws {
        let rig = try await Self.rig()
        try await rig.publish("1.0.0", script: ReleaseRig.acknowledging)
        let path = rig.releases + "/stable/manifest.json"
        var text = try String(contentsOfFile: path, encoding: .utf8)
        // Another version under the same signature: it no longer verifies.
        text = text.replacingOccurrences(of: "\"1.0.0\"", with: "\"1.0.9\"")
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let result = try await ClientctlBinary.run(["install", "--root", rig.root])
        #expect(result.status != 0)
        let refused = try #require(Self.find(try Self.journal(rig.root), "check-refused"))
        #expect(Self.string(refused, "reason") == "signature", "\(refused)")
    }

    @Test func aRolloutThatHasNotReachedThisDeviceIsRefusedWithItsReason() async throws {
        let rig = try await Self.rig()
        try await rig.publish("1.0.0", script: ReleaseRig.acknowledging)
        try await rig.run(["rollout", "set", "stable", "--percent", "0", "--out", rig.releases, "--key", rig.key + ".pem"])
        try await rig.run(["install", "--root", rig.root])
        let reports = try Self.journal(rig.root)
        let refused = try #require(Self.find(reports, "check-refused"))
        #expect(Self.string(refused, "reason") == "rollout" && Self.string(refused, "version") == "1.0.0", "\(refused)")
        guard case .object(let rollout)? = refused["rollout"] else { throw HarnessError("no rollout: \(refused)") }
        #expect(rollout["percent"] == .integer(0) && rollout["paused"] == .bool(false))
        #expect(!Self.types(reports).contains("update-found"))
    }

    @Test func aDownloadThatFailsIsReportedWithTheVersionAndKind() async throws {
        let rig = try await Self.rig()
        try await rig.publish("1.0.0", script: ReleaseRig.acknowledging)
        // The archive is gone from the feed: the download answers 404.
        for name in try FileManager.default.contentsOfDirectory(atPath: rig.releases + "/stable")
        where name.hasSuffix(".tar.gz") || name.hasSuffix(".zip") || name.hasSuffix(".tar.zst") {
            try FileManager.default.removeItem(atPath: rig.releases + "/stable/" + name)
        }
        let result = try await ClientctlBinary.run(["install", "--root", rig.root])
        #expect(result.status != 0)
        let reports = try Self.journal(rig.root)
        #expect(Self.find(reports, "update-found") != nil, "\(Self.types(reports))")
        let failed = try #require(Self.find(reports, "download-failed"))
        #expect(Self.string(failed, "version") == "1.0.0")
        #expect(Self.string(failed, "reason") == "http-status", "\(failed)")
    }

    @Test func withoutAReportURLNothingIsRecorded() async throws {
        let rig = try await ReleaseRig(label: "no-reports")
        try await rig.publish("1.0.0", script: ReleaseRig.acknowledging)
        try await rig.run(["install", "--root", rig.root])
        try await rig.run(["reload", "--root", rig.root])
        try await rig.run(["ack", "--root", rig.root])
        #expect(!FileManager.default.fileExists(atPath: rig.root + "/reports"))
        #expect(try await rig.status().reports == nil)
    }

    /// A SIGKILL right after a report's write(2), before its fdatasync: the line is whole
    /// in the journal, and the next run numbers on from it.
    @Test func aReportSurvivesASIGKILLMidAppend() async throws {
        let rig = try await Self.rig()
        try await rig.publish("1.0.0", script: ReleaseRig.acknowledging)
        let killed = try await ClientctlBinary.run(
            ["install", "--root", rig.root], environment: ["CLIENTCTL_CRASH_AT": "journal.appended:2"])
        #expect(killed.status != 0)
        let before = try Self.journal(rig.root)
        #expect(before.count == 2, "\(Self.types(before))")
        try await rig.run(["install", "--root", rig.root])
        let after = try Self.journal(rig.root)
        let seqs = after.compactMap { r -> Int64? in
            if case .integer(let n)? = r["seq"] { return n }
            return nil
        }
        #expect(seqs == Array(1...Int64(seqs.count)))
        #expect(Self.types(after).contains("installed"))
    }

    // MARK: status --explain

    static func explain(_ rig: ReleaseRig) async throws -> [String] {
        let result = try await rig.run(["status", "--root", rig.root, "--explain"])
        return String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    @Test func explainSaysUpToDate() async throws {
        let rig = try await Self.rig()
        try await rig.publish("1.0.0", script: ReleaseRig.acknowledging)
        for command in ["install", "reload", "ack", "install"] { try await rig.run([command, "--root", rig.root]) }
        let lines = try await Self.explain(rig)
        #expect(lines.count == 1 && lines[0].hasPrefix("up to date: ") && lines[0].contains("1.0.0"), "\(lines)")
    }

    @Test func explainNamesTheRolloutAndThisDevicesPlace() async throws {
        let rig = try await Self.rig()
        try await rig.publish("1.0.0", script: ReleaseRig.acknowledging)
        try await rig.run(["rollout", "set", "stable", "--percent", "0", "--out", rig.releases, "--key", rig.key + ".pem"])
        try await rig.run(["install", "--root", rig.root])
        let lines = try await Self.explain(rig)
        #expect(lines.contains { $0.hasPrefix("rollout: ") && $0.contains("0 %") && $0.contains("place ") }, "\(lines)")
    }

    @Test func explainNamesTheShellAReleaseNeeds() async throws {
        let rig = try await Self.rig()
        let build = rig.tmp("build-2")
        try FileManager.default.createDirectory(atPath: build, withIntermediateDirectories: true)
        try ReleaseRig.page(version: "2.0.0", script: "").write(to: URL(fileURLWithPath: build + "/index.html"))
        try await rig.run([
            "publish", build, "--app", rig.app, "--channel", "stable", "--version", "2.0.0", "--min-shell", "9.0.0",
            "--key", rig.key + ".pem", "--out", rig.releases,
        ])
        try await rig.run(["install", "--root", rig.root])
        let lines = try await Self.explain(rig)
        #expect(lines.contains { $0.hasPrefix("needs another shell: ") && $0.contains("9.0.0") }, "\(lines)")
        let refused = try #require(Self.find(try Self.journal(rig.root), "check-refused"))
        #expect(Self.string(refused, "reason") == "needs-shell")
    }

    @Test func explainNamesABlacklistedVersionAndWhy() async throws {
        let rig = try await Self.rig(startupTimeout: 1)
        try await rig.publish("1.0.0", script: "")
        for _ in 0..<2 {
            try await rig.run(["install", "--root", rig.root])
            try await rig.run(["reload", "--root", rig.root])
            try await WorldTime.pass(.seconds(2), "the trial's 1 s start-up timeout, in another process, must pass")
            try await rig.run(["gc", "--root", rig.root])
        }
        let lines = try await Self.explain(rig)
        #expect(lines.contains { $0.hasPrefix("blacklisted: 1.0.0") && $0.contains("did not report startup complete in time") }, "\(lines)")
        let json = try await rig.run(["status", "--root", rig.root, "--explain", "--json"])
        #expect(String(decoding: json.stdout, as: UTF8.self).contains("\"explanation\""))
    }

    /// The root's disk is full: the check fails exactly as without reports (no-space, exit
    /// 73), the reports give way, status still answers; with space again, all goes on.
    @Test func aFullDiskStopsReportsNotTheCheck() async throws {
        let rig = try await Self.rig()
        try await rig.publish("1.0.0", script: ReleaseRig.acknowledging)
        let mount = rig.tmp("disk")
        try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: true)
        let disk = try Tmpfs.mount(at: mount, size: "4m")
        defer { disk.unmount() }
        let root = mount + "/device"
        let copied = try await Subprocess.run("cp", ["-a", rig.root, root])
        #expect(copied.status == 0)
        Tmpfs.fill(mount + "/filler", leaving: 0)
        let full = try await ClientctlBinary.run(["install", "--root", root])
        #expect(full.status == 73, "\(full.errorOutput)")
        #expect(try Self.journal(root).isEmpty)
        let status = try await ClientctlBinary.run(["status", "--root", root])
        #expect(status.status == 0, "\(status.errorOutput)")
        try Tmpfs.removeFiller(mount + "/filler")
        let again = try await ClientctlBinary.run(["install", "--root", root])
        #expect(again.status == 0, "\(again.errorOutput)")
        #expect(Self.types(try Self.journal(root)).contains("installed"))
    }
}

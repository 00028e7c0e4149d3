import ClientFoundation
import Foundation
import SignedManifest
import StrictJSON
import TestSupport
import Testing

/// The guard counts only what it can trust (docs/fleet-reports.md#the-rollout-guard), against
/// a real `clientctl collect` and `clientctl rollout guard`: 1,000 invented device ids posting
/// 10,000 rollbacks halt nothing, under open admission (they were first heard from after the
/// release) or manual (nobody admitted them); the same flood counted would halt, which is what
/// the history rule and admission take away. After a person resumes a halted rollout, only
/// what was reported since counts.
@Suite struct GuardTrustTests {
    static let app = "com.example.notes"

    /// 30 real devices, heard from before the release: a heartbeat each, running 1.0.0.
    static let real = 1..<31
    /// The invented ids.
    static let invented = 1_000..<2_000

    static func report(_ seq: Int, _ type: String, _ running: String, _ extra: String = "") -> String {
        let now = Int64(Date().timeIntervalSince1970 * 1000) - 60_000
        return "{\"seq\":\(seq),\"time\":\(now + Int64(seq)),\"type\":\"\(type)\",\"running\":\"\(running)\"\(extra)}"
    }

    /// A batch of device `n` (schema 1, or 2 with `key`).
    static func batch(_ n: Int, _ reports: [String], key: Ed25519.PrivateKey? = nil) throws -> (Data, [String]) {
        let device = String(format: "%032x", n)
        guard let key else {
            let body =
                "{\"schema\":1,\"device\":\"\(device)\",\"app\":\"\(app)\",\"channel\":\"stable\",\"reports\":[\(reports.joined(separator: ","))]}"
            return (Data(body.utf8), [])
        }
        let hex = key.publicKey.rawRepresentation.map { String(format: "%02x", $0) }.joined()
        let body = Data(
            ("{\"schema\":2,\"device\":\"\(device)\",\"key\":\"\(hex)\",\"stream\":\"0000000000000001\",\"app\":\"\(app)\","
                + "\"channel\":\"stable\",\"reports\":[\(reports.joined(separator: ","))]}").utf8)
        let signature = try key.signature(for: Array(body)).map { String(format: "%02x", $0) }.joined()
        return (body, ["Clientctl-Signature: \(signature)"])
    }

    /// POSTs every batch through one `curl` (a config of `next` requests on one connection):
    /// the status of each, in order.
    static func postAll(_ collector: CollectProcess, _ batches: [(Data, [String])], dir: TemporaryDirectory) async throws -> [Int] {
        var config = ""
        for (i, (body, headers)) in batches.enumerated() {
            let file = dir("batch-\(UUID().uuidString).json")
            try body.write(to: URL(fileURLWithPath: file))
            if i > 0 { config += "next\n" }
            config += "url = \"\(collector.baseURL)v1/reports\"\nrequest = POST\ndata-binary = \"@\(file)\"\n"
            config += "header = \"Content-Type: application/json\"\n"
            for h in headers { config += "header = \"\(h)\"\n" }
            config += "output = /dev/null\nwrite-out = \"%{http_code}\\n\"\n"
        }
        let path = dir("curl-\(UUID().uuidString).conf")
        try Data(config.utf8).write(to: URL(fileURLWithPath: path))
        let run = try await Subprocess.run("/usr/bin/curl", ["-sS", "--config", path], timeout: .seconds(600))
        return run.output.split(separator: "\n").compactMap { Int($0) }
    }

    /// Waits for the wall clock to pass into the next whole second: a manifest's `published`
    /// is whole seconds, so a release published now is after every report received before.
    static func nextSecond() async throws {
        let target = (Date().timeIntervalSince1970 + 1).rounded(.down) + 0.05
        try await Poll.until("the wall clock to pass into the next second", every: .milliseconds(20)) {
            Date().timeIntervalSince1970 >= target
        }
    }

    static func guardRun(_ rig: RestrictionRig, _ collector: CollectProcess, _ extra: [String] = []) async throws -> Subprocess.Result {
        try await ClientctlBinary.run(
            [
                "rollout", "guard", "stable", "--out", rig.d.releases.path, "--key", rig.d.tmp("keys/guard.pem"), "--collector",
                collector.baseURL, "--token-file", collector.tokenPath,
            ] + extra)
    }

    /// The real devices' trials of 1.1.0, all committed.
    static func healthyTrials(key: (Int) -> Ed25519.PrivateKey?) throws -> [(Data, [String])] {
        try real.map { n in
            try batch(
                n,
                [
                    report(2, "trial-started", "1.1.0", ",\"version\":\"1.1.0\""),
                    report(3, "committed", "1.1.0", ",\"version\":\"1.1.0\",\"ms\":700"),
                ],
                key: key(n))
        }
    }

    /// Each invented id: a trial of 1.1.0 and 10 rollbacks of it.
    static func flood(key: (Int) throws -> Ed25519.PrivateKey?) throws -> [(Data, [String])] {
        try invented.map { n in
            let rollbacks = (0..<10).map { report(2 + $0, "rolled-back", "1.0.0", ",\"version\":\"1.1.0\",\"reason\":\"timed-out\"") }
            return try batch(n, [report(1, "trial-started", "1.1.0", ",\"version\":\"1.1.0\"")] + rollbacks, key: try key(n))
        }
    }

    @Test func inventedIdsUnderOpenAdmissionCountForNothingAfterTheRelease() async throws {
        let rig = try await RestrictionRig()
        try await rig.d.installAndCommit(["1.0.0"])
        let dir = try TemporaryDirectory("guard-trust")
        let collector = try await CollectProcess(
            database: "sqlite:" + dir("reports.db"), arguments: ["--rate-per-address", "100000"], scratch: dir.path)
        let heard = try await Self.postAll(collector, try Self.real.map { try Self.batch($0, [Self.report(1, "heartbeat", "1.0.0")]) }, dir: dir)
        #expect(heard == Array(repeating: 200, count: Self.real.count))
        try await Self.nextSecond()
        try rig.d.publish("1.1.0")
        let trials = try await Self.postAll(collector, try Self.healthyTrials { _ in nil }, dir: dir)
        #expect(trials == Array(repeating: 200, count: Self.real.count))
        let flood = try await Self.postAll(collector, try Self.flood { _ in nil }, dir: dir)
        #expect(flood == Array(repeating: 200, count: Self.invented.count), "every forged batch is stored: only the guard's count leaves them out")

        let before = try TreeSnapshot(rig.d.releases.path)
        let run = try await Self.guardRun(rig, collector)
        #expect(run.status == 0, "\(run.output) \(run.errorOutput)")
        #expect(run.output.contains("holds: 0 of 30 devices rolled it back"), "\(run.output)")
        #expect(run.output.contains(", 1000 others left out"), "\(run.output)")
        #expect(try TreeSnapshot(rig.d.releases.path) == before)

        // The same figures, with every device trusted: the flood alone would have halted it.
        let trusting = try await Self.guardRun(rig, collector, ["--history-before", RFC3339.format(Date().addingTimeInterval(3600))])
        #expect(trusting.status == 3, "\(trusting.output) \(trusting.errorOutput)")
        #expect(trusting.output.contains("halted: 1000 of 1030 devices rolled it back"), "\(trusting.output)")
        #expect(collector.stop() == 0)
    }

    @Test func inventedIdsUnderManualAdmissionCountForNothingWhateverTheirHistory() async throws {
        let rig = try await RestrictionRig()
        try await rig.d.installAndCommit(["1.0.0"])
        let dir = try TemporaryDirectory("guard-trust")
        let keys = try Self.real.map { _ in try Ed25519.PrivateKey.generate() }
        let listed = keys.map { $0.publicKey.rawRepresentation.map { String(format: "%02x", $0) }.joined() }.joined(separator: "\n")
        try Data((listed + "\n").utf8).write(to: URL(fileURLWithPath: dir("admitted-keys")))
        let collector = try await CollectProcess(
            database: "sqlite:" + dir("reports.db"),
            arguments: ["--admission", "manual", "--admit-file", dir("admitted-keys"), "--rate-per-address", "100000"], scratch: dir.path)
        try rig.d.publish("1.1.0")
        // The admit file is read as the collector starts: post until the real devices count.
        var statuses: [Int] = []
        try? await Poll.until("the real devices to count", timeout: 30, every: .milliseconds(100)) {
            statuses = try await Self.postAll(collector, try Self.healthyTrials { keys[$0 - 1] }, dir: dir)
            let summary = try await collector.read("v1/fleet?app=\(Self.app)&channel=stable", token: collector.token)
            let object = try JSONSerialization.jsonObject(with: summary.data) as? [String: Any]
            return object?["devices"] as? Int == Self.real.count
        }
        #expect(statuses == Array(repeating: 200, count: Self.real.count))
        let flood = try await Self.postAll(collector, try Self.flood { _ in try Ed25519.PrivateKey.generate() }, dir: dir)
        #expect(flood == Array(repeating: 200, count: Self.invented.count), "held apart, not refused")

        // Even with every device's history trusted, only admitted devices count.
        let run = try await Self.guardRun(rig, collector, ["--history-before", RFC3339.format(Date().addingTimeInterval(3600))])
        #expect(run.status == 0, "\(run.output) \(run.errorOutput)")
        #expect(run.output.contains("holds: 0 of 30 devices rolled it back"), "\(run.output)")
        #expect(run.output.contains("counting admitted devices and devices heard from before"), "\(run.output)")
        let pending = try await collector.read("v1/devices?status=pending&limit=1", token: collector.token)
        let counts = (try JSONSerialization.jsonObject(with: pending.data) as? [String: Any])?["counts"] as? [String: Int]
        #expect(counts?["pending"] == Self.invented.count && counts?["accepted"] == Self.real.count, "\(pending.body)")
        #expect(collector.stop() == 0)
    }

    /// A trial of 1.1.0 on each of `devices`, the first 12 of which roll it back.
    static func trialsWhereTwelveFail(_ devices: Range<Int>, firstSeq: Int) throws -> [(Data, [String])] {
        try devices.map { n in
            try batch(
                n,
                [
                    report(firstSeq, "trial-started", "1.1.0", ",\"version\":\"1.1.0\""),
                    n < devices.lowerBound + 12
                        ? report(firstSeq + 1, "rolled-back", "1.0.0", ",\"version\":\"1.1.0\",\"reason\":\"timed-out\"")
                        : report(firstSeq + 1, "committed", "1.1.0", ",\"version\":\"1.1.0\",\"ms\":700"),
                ])
        }
    }

    /// The guard halts 1.1.0; a person judges the halt false and lifts it (`rollout complete`
    /// here: any edit the release role signs supersedes the restriction): the next pass
    /// judges only what was reported since, so it holds, and halts again only on new failures.
    @Test func afterAResumeOnlyReportsSinceCount() async throws {
        let rig = try await RestrictionRig()
        try await rig.d.installAndCommit(["1.0.0"])
        let dir = try TemporaryDirectory("guard-trust")
        let collector = try await CollectProcess(database: "sqlite:" + dir("reports.db"), scratch: dir.path)
        let devices = 1..<41
        #expect(
            try await Self.postAll(collector, try devices.map { try Self.batch($0, [Self.report(1, "heartbeat", "1.0.0")]) }, dir: dir).allSatisfy {
                $0 == 200
            })
        try await Self.nextSecond()
        try rig.d.publish("1.1.0")
        let failing = try Self.trialsWhereTwelveFail(devices, firstSeq: 2)
        #expect(try await Self.postAll(collector, failing, dir: dir).allSatisfy { $0 == 200 })
        let halt = try await Self.guardRun(rig, collector)
        #expect(halt.status == 3 && halt.output.contains("halted: 12 of 40 devices"), "\(halt.output) \(halt.errorOutput)")

        try await Self.nextSecond()
        let resume = try await ClientctlBinary.run(["rollout", "complete", "stable", "--out", rig.d.releases.path, "--key", rig.releasePEM])
        #expect(resume.status == 0, "\(resume.errorOutput)")
        let after = try await Self.guardRun(rig, collector)
        #expect(after.status == 0, "\(after.output) \(after.errorOutput)")
        #expect(after.output.contains("holds: 0 of 0 devices rolled it back"), "\(after.output)")
        #expect(after.output.contains("reports since the resume at "), "\(after.output)")

        try await Self.nextSecond()
        let again = try Self.trialsWhereTwelveFail(devices, firstSeq: 4)
        #expect(try await Self.postAll(collector, again, dir: dir).allSatisfy { $0 == 200 })
        let haltAgain = try await Self.guardRun(rig, collector)
        #expect(haltAgain.status == 3 && haltAgain.output.contains("halted: 12 of 40 devices"), "\(haltAgain.output) \(haltAgain.errorOutput)")
        #expect(collector.stop() == 0)
    }
}

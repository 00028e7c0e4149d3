import ClientFoundation
import Foundation
import SignedManifest
import StrictJSON
import TestSupport
import Testing

/// The brake answers only to trusted hands (docs/fleet-reports.md#the-rollout-guard,
/// docs/threat-model.md#the-rollout-guard), against real `clientctl collect`, `rollout
/// guard`, `rollout set` and `fleet` binaries with real signatures. Each test is an attack
/// that halted a healthy release before: a key stolen from one admitted device signing for
/// 40 invented ids; a collector restarted from `open` to `manual`; a routine re-signing that
/// moved the history point past 40 invented ids; a rejected key put back by the admit file.
@Suite struct GuardBrakeTests {
    typealias G = GuardTrustTests

    /// 40 invented ids, each with a trial of 1.1.0 and a rollback of it: enough to halt a
    /// release of 30 healthy devices were they counted (40 of 70, lower bound far above 10 %).
    static let invented = 5_000..<5_040

    static func failing(key: (Int) throws -> Ed25519.PrivateKey?) throws -> [(Data, [String])] {
        try invented.map { n in
            try G.batch(
                n,
                [
                    G.report(1, "trial-started", "1.1.0", ",\"version\":\"1.1.0\""),
                    G.report(2, "rolled-back", "1.0.0", ",\"version\":\"1.1.0\",\"reason\":\"timed-out\""),
                ], key: try key(n))
        }
    }

    static func hex(_ key: Ed25519.PrivateKey) -> String { key.publicKey.rawRepresentation.map { String(format: "%02x", $0) }.joined() }

    static func adminToken(_ dir: TemporaryDirectory) throws -> String {
        let path = dir("admin.token")
        try Data("admin-token-0123456789abcdef\n".utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o600)
        return path
    }

    /// Posts the real devices' healthy trials until all 30 count (the admit file is read by a
    /// service as the collector starts).
    static func healthyTrialsCounted(_ collector: CollectProcess, keys: [Ed25519.PrivateKey], dir: TemporaryDirectory) async throws {
        try await Poll.until("the 30 admitted devices counted", timeout: 60, every: .milliseconds(100)) {
            let statuses = try await G.postAll(collector, try G.healthyTrials { keys[$0 - 1] }, dir: dir)
            let summary = try await collector.read("v1/fleet?app=\(G.app)&channel=stable", token: collector.token)
            let object = try JSONSerialization.jsonObject(with: summary.data) as? [String: Any]
            return statuses.allSatisfy { $0 == 200 } && object?["devices"] as? Int == G.real.count
        }
    }

    /// A key taken from one admitted device's root signs batches for 40 new ids: under
    /// `manual` (and `listed`) admission each was accepted as admitted, and the guard halted
    /// the release (40 of 40 rolled back). One key speaks for one device: each is refused
    /// `409 key-bound`, naming the device the key speaks for, nothing stored, the guard holds.
    @Test(arguments: ["manual", "listed"])
    func aStolenDeviceKeySpeaksForItsOwnDeviceAlone(_ admission: String) async throws {
        let rig = try await RestrictionRig()
        try await rig.d.installAndCommit(["1.0.0"])
        let dir = try TemporaryDirectory("guard-brake")
        let keys = try G.real.map { _ in try Ed25519.PrivateKey.generate() }
        try Data((keys.map(Self.hex).joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: dir("admitted-keys")))
        let collector = try await CollectProcess(
            database: "sqlite:" + dir("reports.db"),
            arguments: ["--admission", admission, "--admit-file", dir("admitted-keys"), "--rate-per-address", "100000"], scratch: dir.path)
        try rig.d.publish("1.1.0")
        try await Self.healthyTrialsCounted(collector, keys: keys, dir: dir)

        let stolen = keys[0]
        let attack = try await G.postAll(collector, try Self.failing { _ in stolen }, dir: dir)
        #expect(attack == Array(repeating: 409, count: Self.invented.count), "\(attack)")
        let one = try Self.failing { _ in stolen }[0]
        let answer = try await collector.post(one.0, headers: one.1)
        #expect(
            answer.body.contains("already speaks for device \(String(format: "%032x", 1)): one key, one device"), "\(answer.body)")
        let metrics = try await collector.read("metrics", token: collector.token).body
        #expect(metrics.contains("fleet_collector_batches_refused_total{reason=\"key-bound\"} \(Self.invented.count + 1)"), "\(metrics)")

        let run = try await G.guardRun(rig, collector)
        #expect(run.status == 0, "\(run.output) \(run.errorOutput)")
        #expect(run.output.contains("holds: 0 of 30 devices rolled it back"), "\(run.output)")
        let devices = try await ClientctlBinary.run(["fleet", "devices", "--collector", collector.baseURL, "--token-file", collector.tokenPath])
        #expect(devices.output.hasPrefix("admission: \(admission); 30 accepted, 0 pending, 0 rejected\n"), "\(devices.output)")
        #expect(collector.stop() == 0)
    }

    /// A collector that ran `open` holds against 40 invented unsigned ids (no history);
    /// restarted on the same database as `manual`, the documented remedy, it judged every
    /// stored report as admitted and halted. The guard's rule is the same in every mode.
    @Test func aModeChangeChangesWhoMayReportNotWhoCounts() async throws {
        let rig = try await RestrictionRig()
        try await rig.d.installAndCommit(["1.0.0"])
        let dir = try TemporaryDirectory("guard-brake")
        let database = "sqlite:" + dir("reports.db")
        let open = try await CollectProcess(database: database, arguments: ["--rate-per-address", "100000"], scratch: dir.path)
        let heard = try await G.postAll(open, try G.real.map { try G.batch($0, [G.report(1, "heartbeat", "1.0.0")]) }, dir: dir)
        #expect(heard == Array(repeating: 200, count: G.real.count))
        try await G.nextSecond()
        try rig.d.publish("1.1.0")
        #expect(try await G.postAll(open, try G.healthyTrials { _ in nil }, dir: dir).allSatisfy { $0 == 200 })
        #expect(try await G.postAll(open, try Self.failing { _ in nil }, dir: dir).allSatisfy { $0 == 200 })
        let before = try await G.guardRun(rig, open)
        #expect(before.status == 0 && before.output.contains("holds: 0 of 30 devices"), "\(before.output) \(before.errorOutput)")
        #expect(before.output.contains("40 others left out"), "\(before.output)")
        #expect(open.stop() == 0)

        let manual = try await CollectProcess(database: database, arguments: ["--admission", "manual"], scratch: dir.path)
        let after = try await G.guardRun(rig, manual)
        #expect(after.status == 0, "\(after.output) \(after.errorOutput)")
        #expect(after.output.contains("holds: 0 of 30 devices rolled it back"), "\(after.output)")
        #expect(after.output.contains("40 others left out"), "\(after.output)")
        // And the unsigned ids cannot speak any more: manual admission refuses them.
        let refused = try await G.postAll(manual, try Self.failing { _ in nil }, dir: dir)
        #expect(refused.allSatisfy { $0 == 403 }, "\(refused)")
        #expect(manual.stop() == 0)
    }

    /// Under `open`, 40 ids invented right after the release are left out; a routine
    /// `rollout set --percent 50` and `rollout complete` re-signed the manifest with a new
    /// `published`, and the next pass trusted every id first heard before that edit. The
    /// version's first publication rides along every re-signing (`firstPublished`), and the
    /// guard's history point stays there; `--history-before` still overrides it.
    @Test func aReSigningNeverMovesTheHistoryPoint() async throws {
        let rig = try await RestrictionRig()
        try await rig.d.installAndCommit(["1.0.0"])
        let dir = try TemporaryDirectory("guard-brake")
        let collector = try await CollectProcess(
            database: "sqlite:" + dir("reports.db"), arguments: ["--rate-per-address", "100000"], scratch: dir.path)
        #expect(
            try await G.postAll(collector, try G.real.map { try G.batch($0, [G.report(1, "heartbeat", "1.0.0")]) }, dir: dir).allSatisfy {
                $0 == 200
            })
        try await G.nextSecond()
        try rig.d.publish("1.1.0")
        let first = try rig.manifest().published
        #expect(try await G.postAll(collector, try G.healthyTrials { _ in nil }, dir: dir).allSatisfy { $0 == 200 })
        #expect(try await G.postAll(collector, try Self.failing { _ in nil }, dir: dir).allSatisfy { $0 == 200 })
        let held = try await G.guardRun(rig, collector)
        #expect(held.status == 0 && held.output.contains("holds: 0 of 30 devices"), "\(held.output) \(held.errorOutput)")

        for edit in [["rollout", "set", "stable", "--percent", "50"], ["rollout", "complete", "stable"]] {
            try await G.nextSecond()
            let signed = try await ClientctlBinary.run(edit + ["--out", rig.d.releases.path, "--key", rig.releasePEM])
            #expect(signed.status == 0, "\(edit): \(signed.errorOutput)")
            let manifest = try rig.manifest()
            #expect(manifest.published > first && manifest.firstPublished == first, "\(edit): the first publication is kept, signed")
            let run = try await G.guardRun(rig, collector)
            #expect(run.status == 0, "\(edit): \(run.output) \(run.errorOutput)")
            #expect(run.output.contains("holds: 0 of 30 devices rolled it back"), "\(edit): \(run.output)")
            #expect(run.output.contains("heard from before \(RFC3339.format(first))"), "\(edit): \(run.output)")
        }
        // An operator who trusts later devices says so.
        let trusting = try await G.guardRun(rig, collector, ["--history-before", RFC3339.format(Date().addingTimeInterval(3600))])
        #expect(trusting.status == 3 && trusting.output.contains("halted: 40 of 70 devices"), "\(trusting.output) \(trusting.errorOutput)")
        #expect(collector.stop() == 0)
    }

    /// A rejected key still in the admit file was accepted again at the next collector start
    /// and at any change of the file, an older signed list put back included. An operator's
    /// rejection wins over every admit list until the operator lifts it (`fleet admit`).
    @Test func aRejectionSticksUntilAnOperatorLiftsIt() async throws {
        let dir = try TemporaryDirectory("guard-brake")
        let admin = try Self.adminToken(dir)
        let signer = try Ed25519.PrivateKey.generate()
        let provisioning = dir("provisioning.pub.pem")
        try Data(signer.publicKey.pemRepresentation.utf8).write(to: URL(fileURLWithPath: provisioning))
        let liar = try Ed25519.PrivateKey.generate()
        let honest = try Ed25519.PrivateKey.generate()
        let listPath = dir("admitted-keys")
        func writeList(_ keys: [Ed25519.PrivateKey]) throws {
            let bytes = Data((keys.map(Self.hex).joined(separator: "\n") + "\n").utf8)
            try bytes.write(to: URL(fileURLWithPath: listPath))
            try Data(try signer.signature(for: Array(bytes))).write(to: URL(fileURLWithPath: listPath + ".sig"))
        }
        try writeList([liar])
        let oldList = try Data(contentsOf: URL(fileURLWithPath: listPath))
        let oldSignature = try Data(contentsOf: URL(fileURLWithPath: listPath + ".sig"))
        let arguments = [
            "--admission", "listed", "--admit-file", listPath, "--admit-file-key", provisioning, "--admin-token-file", admin,
        ]
        /// The status of a heartbeat of device `n` signed by `key`; a batch held apart (the
        /// key not admitted) answers 200 too, and is 202 here.
        func post(_ collector: CollectProcess, _ n: Int, _ key: Ed25519.PrivateKey, seq: Int) async throws -> Int {
            let batch = try G.batch(n, [G.report(seq, "heartbeat", "1.0.0")], key: key)
            let answer = try await collector.post(batch.0, headers: batch.1)
            return answer.status == 200 && answer.body.contains("\"held\":true") ? 202 : answer.status
        }
        var collector = try await CollectProcess(database: "sqlite:" + dir("reports.db"), arguments: arguments, scratch: dir.path)
        try await Poll.until("the listed key accepted", timeout: 60, every: .milliseconds(100)) {
            try await post(collector, 1, liar, seq: 1) == 200
        }
        let reject = try await ClientctlBinary.run(
            ["fleet", "reject", "--collector", collector.baseURL, "--token-file", admin, Self.hex(liar)])
        #expect(reject.status == 0, "\(reject.output) \(reject.errorOutput)")
        #expect(try await post(collector, 1, liar, seq: 2) == 403)

        // A restart reads the admit file again: the rejection stays.
        #expect(collector.stop() == 0)
        collector = try await CollectProcess(database: "sqlite:" + dir("reports.db"), arguments: arguments, scratch: dir.path)
        // A new list (another key added) is read: the honest key comes in, the liar stays out.
        try writeList([liar, honest])
        var seq = 0
        try await Poll.until("the new list read", timeout: 120, every: .milliseconds(500)) {
            seq += 1
            return try await post(collector, 2, honest, seq: seq) == 200
        }
        #expect(try await post(collector, 1, liar, seq: 3) == 403)
        // The older, genuinely signed list put back: still out.
        try oldList.write(to: URL(fileURLWithPath: listPath))
        try oldSignature.write(to: URL(fileURLWithPath: listPath + ".sig"))
        do {
            try await Poll.until("the old list read", timeout: 120, every: .milliseconds(200)) {
                collector.stderr.components(separatedBy: "1 rejected by an operator left out").count > 3
            }
        } catch {
            Issue.record("\(error): \(collector.stderr)")
        }
        #expect(try await post(collector, 1, liar, seq: 4) == 403)
        let devices = try await ClientctlBinary.run(["fleet", "devices", "--collector", collector.baseURL, "--token-file", collector.tokenPath])
        #expect(devices.output.hasPrefix("admission: listed; 1 accepted, 0 pending, 1 rejected\n"), "\(devices.output)")

        // The operator lifts it.
        let admit = try await ClientctlBinary.run(["fleet", "admit", "--collector", collector.baseURL, "--token-file", admin, Self.hex(liar)])
        #expect(admit.status == 0, "\(admit.output) \(admit.errorOutput)")
        #expect(try await post(collector, 1, liar, seq: 5) == 200)
        #expect(collector.stop() == 0)
    }
}

import ClientFoundation
import ClientUpdater
import Foundation
import SignedManifest
import StrictJSON
import TestSupport
import Testing

/// `clientctl rollout guard --label`: the guard judges one cohort of a release's devices and
/// halts it for them alone (docs/fleet-reports.md#the-rollout-guard), with a real
/// `clientctl collect` on 127.0.0.1 fed labelled batches, a release folder with a rollout
/// role (``RestrictionRig``) and real device roots (`clientctl init --label`, `install`,
/// `status --explain`) checking it over loopback.
@Suite struct GuardCohortTests {
    /// A device root `name` labelled `label`, following the rig's channel.
    static func device(_ rig: RestrictionRig, _ name: String, label: String) async throws -> String {
        let root = rig.d.tmp(name)
        try await RestrictionRig.clientctl([
            "init", "--root", root, "--app", "com.example.notes", "--channel", "stable",
            "--manifest-url", rig.d.server.url("/stable/manifest.json").absoluteString,
            "--trust", ClientctlBinary.packagePath("Keys/test-signing.pub.pem"), "--shell-version", "1.0.0", "--label", label,
        ])
        return root
    }

    /// `clientctl install --root ROOT --json`.
    static func install(_ root: String) async throws -> InstallReport {
        let r = try await RestrictionRig.clientctl(["install", "--root", root, "--json"])
        return try JSONDecoder().decode(InstallReport.self, from: r.stdout)
    }

    /// `clientctl status --root ROOT --json [--explain]`.
    static func status(_ root: String, explain: Bool = false) async throws -> StatusReport {
        let r = try await RestrictionRig.clientctl(["status", "--root", root, "--json"] + (explain ? ["--explain"] : []))
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(StatusReport.self, from: r.stdout)
    }

    /// The guard with `labels` (`--label` each) and `extra`.
    static func guardRun(_ rig: RestrictionRig, _ collector: CollectProcess, _ labels: [String], _ extra: [String] = []) async throws
        -> Subprocess.Result
    {
        try await RolloutGuardTests.guardRun(rig, collector, labels.flatMap { ["--label", $0] } + extra)
    }

    /// Release 1.1.0 for stores 12 and 14. Store 12's devices roll it back (12 of 40),
    /// store 14's do not (0 of 40): the whole fleet's figures hold (12 of 80), store 14's
    /// hold, store 12's halt it for store 12 alone: a store-14 device still installs it, a
    /// store-12 device keeps what it runs and says why. When store 14 then fails too, its
    /// guard narrows further (the two halts compose), and a second pass signs nothing.
    @Test func theGuardHaltsOneCohortAndLeavesTheOtherTakingTheRelease() async throws {
        let rig = try await RestrictionRig()
        try rig.d.publish("1.0.0")
        let twelve = try await Self.device(rig, "store12", label: "store=12")
        let fourteen = try await Self.device(rig, "store14", label: "store=14")
        for root in [twelve, fourteen] { #expect(try await Self.install(root).version == "1.0.0") }
        try rig.d.publish("1.1.0") { $0["target"] = .string("store in (12, 14)") }

        let dir = try TemporaryDirectory("guard-cohort")
        let collector = try await RolloutGuardTests.collector(
            dir,
            RolloutGuardTests.trials("1.1.0", devices: 1..<41, failing: 12, labels: ["store": "12"])
                + RolloutGuardTests.trials("1.1.0", devices: 41..<81, failing: 0, labels: ["store": "14"]))
        let before = try TreeSnapshot(rig.d.releases.path)

        let whole = try await Self.guardRun(rig, collector, [])
        #expect(whole.status == 0 && whole.output.contains(": holds: 12 of 80 devices rolled it back"), "\(whole.output) \(whole.errorOutput)")
        let healthy = try await Self.guardRun(rig, collector, ["store=14"])
        #expect(healthy.status == 0, "\(healthy.errorOutput)")
        #expect(healthy.output.hasPrefix("com.example.notes 1.1.0 on stable (devices labelled store=14): holds: 0 of 40"), "\(healthy.output)")
        #expect(try TreeSnapshot(rig.d.releases.path) == before, "passes that hold write nothing")

        let run = try await Self.guardRun(rig, collector, ["store=12"])
        #expect(run.status == 3, "\(run.errorOutput)")
        #expect(run.output.split(separator: "\n").count == 1, "\(run.output)")
        #expect(
            run.output.hasPrefix(
                "com.example.notes 1.1.0 on stable (devices labelled store=12): halted: 12 of 40 devices rolled it back (30 %; lower bound 18.1 %); "),
            "\(run.output)")
        #expect(run.output.contains("; restriction.json narrows it to 'not store = 12' until "), "\(run.output)")
        #expect(run.output.contains("(signed by key \(rig.guardKey.publicKey.keyId))"), "\(run.output)")
        let restriction = try RolloutGuardTests.restriction(rig)
        #expect(!restriction.paused && restriction.revoked.isEmpty && restriction.target?.description == "not store = 12")
        #expect(restriction.signatures.map(\.keyId) == [rig.guardKey.publicKey.keyId])

        // A store-14 device still takes the release; a store-12 device keeps what it runs.
        let taken = try await Self.install(fourteen)
        #expect(taken.version == "1.1.0" && taken.result != .skipped, "\(taken)")
        let held = try await Self.install(twelve)
        #expect(held.result == .skipped, "\(held)")
        #expect(held.message.contains("not store = 12") && held.message.contains("rollout role's restriction of release 1.1.0"), "\(held.message)")
        #expect(held.message.hasSuffix("this device keeps what it runs"), "\(held.message)")
        let explained = try await Self.status(twelve, explain: true)
        #expect(
            explained.explanation?.contains { $0.hasPrefix("not for this device: ") && $0.contains("rollout role's restriction") } == true,
            "\(explained.explanation ?? [])")
        #expect(explained.installed.map(\.version) == ["1.0.0"] && (explained.pending ?? "1.0.0") == "1.0.0", "\(explained)")

        // The same cohort again: already halted, nothing signed.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: RolloutGuardTests.restrictionPath(rig)))
        let again = try await Self.guardRun(rig, collector, ["store=12"], ["--json"])
        #expect(again.status == 3, "\(again.errorOutput)")
        let object = try #require(try JSONSerialization.jsonObject(with: again.stdout) as? [String: Any])
        #expect(object["action"] as? String == "already-halted" && object["labels"] as? [String: String] == ["store": "12"], "\(again.output)")
        #expect((object["restriction"] as? [String: Any])?["target"] as? String == "not store = 12", "\(again.output)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: RolloutGuardTests.restrictionPath(rig))) == bytes)

        // Store 14 fails too (30 more devices roll it back): its guard narrows further.
        for batch in RolloutGuardTests.trials("1.1.0", devices: 81..<111, failing: 30, labels: ["store": "14"]) {
            #expect(try await collector.post(batch).status == 200)
        }
        let second = try await Self.guardRun(rig, collector, ["store=14"])
        #expect(second.status == 3 && second.output.contains("halted: 30 of 70 devices"), "\(second.output) \(second.errorOutput)")
        #expect(try RolloutGuardTests.restriction(rig).target?.description == "not store = 12 and not store = 14")
        let first = try await Self.guardRun(rig, collector, ["store=12"])
        #expect(first.status == 3 && first.output.contains(": already halted: "), "\(first.output)")
        // The store-14 device that took it keeps it: a narrower target revokes nothing.
        let kept = try await Self.install(fourteen)
        #expect(kept.result == .upToDate || kept.result == .skipped, "\(kept)")
        let status = try await Self.status(fourteen)
        #expect((status.pending ?? status.installed.last?.version) == "1.1.0", "\(status)")
        #expect(collector.stop() == 0)
    }

    /// A collector before labels ignores `label` and answers the whole fleet's figures,
    /// which must not pass for the cohort's: refused (65), nothing signed.
    @Test func aCollectorThatIgnoresTheLabelIsRefused() async throws {
        let rig = try await RestrictionRig()
        try rig.d.publish("1.0.0")
        try rig.d.publish("1.1.0")
        let dir = try TemporaryDirectory("guard-cohort-old")
        let everyone = """
            {"admission":"open","app":"com.example.notes","channel":"stable","reported":[],"trust":"admitted-or-history",\
            "untrustedDevices":0,"versions":[{"failed":40,"trials":40,"version":"1.1.0"}]}
            """
        let old = try LoopbackHTTPServer { _ in .text(everyone, contentType: "application/json") }
        try Data("token\n".utf8).write(to: URL(fileURLWithPath: dir("read.token")))
        let before = try TreeSnapshot(rig.d.releases.path)
        let run = try await ClientctlBinary.run([
            "rollout", "guard", "stable", "--out", rig.d.releases.path, "--key", rig.d.tmp("keys/guard.pem"), "--collector",
            old.baseURL.absoluteString + "/", "--token-file", dir("read.token"), "--label", "store=12",
        ])
        #expect(run.status == 65, "\(run.output) \(run.errorOutput)")
        #expect(run.errorOutput.contains("the collector answered for every device, not for --label store=12"), "\(run.errorOutput)")
        #expect(old.requests.first?.query?.contains("label=store") == true, "\(old.requests)")
        #expect(try TreeSnapshot(rig.d.releases.path) == before)
    }

    /// `--revoke` is for every device: with `--label` it is refused in one line (64), and a
    /// bad `--label` too; nothing is asked or written.
    @Test func revokeWithALabelAndABadLabelAreRefused() async throws {
        let rig = try await RestrictionRig()
        try rig.d.publish("1.0.0")
        let dir = try TemporaryDirectory("guard-cohort-usage")
        let collector = try await RolloutGuardTests.collector(dir, [])
        let before = try TreeSnapshot(rig.d.releases.path)
        let revoking = try await Self.guardRun(rig, collector, ["store=12"], ["--revoke"])
        #expect(revoking.status == 64, "\(revoking.output) \(revoking.errorOutput)")
        #expect(
            revoking.errorOutput.hasPrefix("clientctl: --revoke revokes the version for every device: it cannot go with --label")
                && revoking.errorOutput.split(separator: "\n").count == 1, "\(revoking.errorOutput)")
        let bad = try await Self.guardRun(rig, collector, ["Store=12"])
        #expect(bad.status == 64, "\(bad.errorOutput)")
        let lines = bad.errorOutput.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].contains("label 'Store=12'"), "\(bad.errorOutput)")
        #expect(try TreeSnapshot(rig.d.releases.path) == before)
        // The collector refuses a bad label itself, and names the cohort it counted.
        let refused = try await collector.read("v1/guard?app=com.example.notes&channel=stable&version=1.0.0&label=Store%3D12", token: collector.token)
        #expect(refused.status == 400 && refused.body.contains("label 'Store=12'"), "\(refused.body)")
        let counted = try await collector.read("v1/guard?app=com.example.notes&channel=stable&version=1.0.0&label=store%3D12", token: collector.token)
        #expect(counted.status == 200 && counted.body.contains("\"labels\":{\"store\":\"12\"}"), "\(counted.body)")
        #expect(collector.stop() == 0)
    }
}

import ArchivePublishing
import ClientFoundation
import ClientUpdater
import DeviceTargeting
import Foundation
import SignedArchive
import SignedManifest
import StrictJSON
import TestSupport
import Testing

/// `clientctl rollout guard` against a real `clientctl collect` on 127.0.0.1 fed batches
/// whose truth the test knows, a release folder with a rollout role (``RestrictionRig``)
/// and real devices (`clientctl install`) checking it over loopback
/// (docs/fleet-reports.md#the-rollout-guard).
@Suite struct RolloutGuardTests {
    static let app = "com.example.notes"

    static func device(_ n: Int) -> String { String(format: "%032x", n) }

    /// One batch of `device`: `reports` are `(type, running, extra fields)`, numbered from
    /// `firstSeq`, a millisecond apart, a minute ago; with `labels`, the device's labels.
    static func batch(
        device n: Int, firstSeq: Int = 1, channel: String = "stable", labels: [String: String] = [:], _ reports: [(String, String, String)]
    ) -> Data {
        let now = Int64(Date().timeIntervalSince1970 * 1000) - 60_000
        let lines = reports.enumerated().map { i, r in
            "{\"seq\":\(firstSeq + i),\"time\":\(now - Int64(reports.count - i)),\"type\":\"\(r.0)\",\"running\":\"\(r.1)\"\(r.2)}"
        }
        let members = labels.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\"\($0.value)\"" }
        let labelled = labels.isEmpty ? "" : ",\"labels\":{" + members.joined(separator: ",") + "}"
        return Data(
            "{\"schema\":1,\"device\":\"\(device(n))\",\"app\":\"\(app)\",\"channel\":\"\(channel)\"\(labelled),\"reports\":[\(lines.joined(separator: ","))]}"
                .utf8)
    }

    /// Devices `range` (labelled `labels`) try `version` (from `from`); the first `failing`
    /// of them roll it back.
    static func trials(
        _ version: String, devices range: Range<Int>, failing: Int, from: String = "1.0.0", labels: [String: String] = [:]
    ) -> [Data] {
        range.enumerated().map { i, n in
            var reports = [("trial-started", version, ",\"version\":\"\(version)\"")]
            if i < failing {
                reports.append(("rolled-back", from, ",\"version\":\"\(version)\",\"reason\":\"timed-out\""))
            } else {
                reports.append(("committed", version, ",\"version\":\"\(version)\",\"ms\":700"))
            }
            return batch(device: n, labels: labels, reports)
        }
    }

    /// A collector (SQLite) holding `batches`.
    static func collector(_ dir: TemporaryDirectory, _ batches: [Data], arguments: [String] = []) async throws -> CollectProcess {
        let collector = try await CollectProcess(database: "sqlite:" + dir("reports.db"), arguments: arguments, scratch: dir.path)
        for batch in batches {
            let posted = try await collector.post(batch)
            #expect(posted.status == 200, "\(posted.body)")
        }
        return collector
    }

    /// `clientctl rollout guard stable --out … --key guard.pem --collector … --token-file …`.
    static func guardRun(_ rig: RestrictionRig, _ collector: CollectProcess, _ extra: [String] = []) async throws -> Subprocess.Result {
        try await ClientctlBinary.run(arguments(rig, collector) + extra)
    }

    /// These tests judge the rule on devices first heard from after the release was
    /// published: `--history-before` a day ahead counts them all (the history rule of open
    /// admission has its own tests, GuardTrustTests).
    static let historyBefore = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + 86_400).rounded(.down))

    static func arguments(_ rig: RestrictionRig, _ collector: CollectProcess) -> [String] {
        [
            "rollout", "guard", "stable", "--out", rig.d.releases.path, "--key", rig.d.tmp("keys/guard.pem"), "--collector", collector.baseURL,
            "--token-file", collector.tokenPath, "--history-before", RFC3339.format(historyBefore),
        ]
    }

    static func restrictionPath(_ rig: RestrictionRig) -> String { rig.d.releases.channelDirectory + "/restriction.json" }

    /// The restriction on disk as a device with the rig's root judges it.
    static func restriction(_ rig: RestrictionRig) throws -> Restriction {
        let data = try Data(contentsOf: URL(fileURLWithPath: rig.d.releases.channelDirectory + "/restriction.json"))
        let root = try TrustRoot.parse(
            Data(contentsOf: URL(fileURLWithPath: rig.d.releases.channelDirectory + "/root/1.json")), source: "root/1.json")
        guard case .inForce(let r) = try Restriction.check(data, for: try rig.manifest(), root: root, now: Date(), source: "restriction.json")
        else {
            throw HarnessError("the restriction is not in force")
        }
        return r
    }

    /// 12 of 40 devices roll 1.1.0 back: the guard halts it with the rollout key (exit 3),
    /// a real device not yet on it is then held back, and the next pass signs nothing.
    @Test func theGuardHaltsAFailingRelease() async throws {
        let rig = try await RestrictionRig()
        try await rig.d.installAndCommit(["1.0.0"])
        try rig.d.publish("1.1.0")
        let dir = try TemporaryDirectory("guard")
        let collector = try await Self.collector(dir, Self.trials("1.1.0", devices: 1..<41, failing: 12))

        let run = try await Self.guardRun(rig, collector)
        #expect(run.status == 3, "\(run.errorOutput)")
        let lines = run.output.split(separator: "\n")
        #expect(lines.count == 1, "\(run.output)")
        #expect(
            run.output.hasPrefix(
                "com.example.notes 1.1.0 on stable: halted: 12 of 40 devices rolled it back (30 %; lower bound 18.1 %); "
                    + "max-failure-rate: lower bound above 10 %; 0 unpublished versions ignored; counting admitted devices and devices heard from before "
                    + RFC3339.format(Self.historyBefore) + ", 0 others left out; restriction.json pauses it until "),
            "\(run.output)")
        #expect(run.output.contains("(signed by key \(rig.guardKey.publicKey.keyId))"))
        let restriction = try Self.restriction(rig)
        #expect(restriction.paused && restriction.revoked.isEmpty && restriction.version == Version(1, 1, 0))
        #expect(restriction.signatures.map(\.keyId) == [rig.guardKey.publicKey.keyId])

        // A real device, over loopback: the release is paused for it.
        let install = try await ClientctlBinary.run(["install", "--root", rig.d.layout.root])
        #expect(install.status == 0, "\(install.errorOutput)")
        #expect(install.output.contains("paused by the rollout role's restriction"), "\(install.output)")
        #expect(try await rig.d.updater().status().installed.map(\.version) == ["1.0.0"])

        // The next pass finds it halted and signs nothing.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: Self.restrictionPath(rig)))
        let again = try await Self.guardRun(rig, collector, ["--json"])
        #expect(again.status == 3, "\(again.errorOutput)")
        let object = try #require(try JSONSerialization.jsonObject(with: again.stdout) as? [String: Any])
        #expect(object["action"] as? String == "already-halted" && object["failed"] as? Int == 12 && object["trials"] as? Int == 40)
        #expect(object["rule"] as? String == "max-failure-rate" && object["verdict"] as? String == "halt")
        #expect(again.output.split(separator: "\n").count == 1)
        #expect(try Data(contentsOf: URL(fileURLWithPath: Self.restrictionPath(rig))) == bytes)
        #expect(collector.stop() == 0)
    }

    /// A restriction the guard asks for names the release it judged: when another release
    /// was published between the guard's reading and its signing, nothing is signed (75,
    /// the next pass judges the new one) and the folder is as it was.
    @Test func aRestrictionForAReleaseNoLongerCurrentIsNotSigned() async throws {
        let rig = try await RestrictionRig()
        try rig.d.publish("1.0.0")
        try rig.d.publish("1.1.0")
        let before = try TreeSnapshot(rig.d.releases.path)
        let error = await #expect(throws: ArchivePublishingError.self) {
            try await ChannelRestrictor.restrict(
                RestrictionRequest(pause: true, release: Version(1, 0, 0)), releases: rig.d.releases.path, channel: "stable",
                signers: [rig.guardKey])
        }
        #expect(error?.code == .contended && error?.message.contains("release is now 1.1.0, not 1.0.0") == true, "\(String(describing: error))")
        #expect(try TreeSnapshot(rig.d.releases.path) == before)
        let signed = try await ChannelRestrictor.restrict(
            RestrictionRequest(pause: true, release: Version(1, 1, 0)), releases: rig.d.releases.path, channel: "stable", signers: [rig.guardKey])
        #expect(signed.paused && signed.version == Version(1, 1, 0))
    }

    /// A restriction asked for on the basis of the `restriction.json` read is signed only
    /// while that file is still there: one another guard (or a person) replaced meanwhile
    /// is not overwritten (75, nothing signed), so two guards never drop each other's halt.
    @Test func aRestrictionMadeFromAnOlderRestrictionIsNotSigned() async throws {
        let rig = try await RestrictionRig()
        try rig.d.publish("1.0.0")
        let path = Self.restrictionPath(rig)
        var request = RestrictionRequest(release: Version(1, 0, 0))
        request.target = try TargetExpression(parsing: "not store = 12")
        request.basis = RestrictionBasis(nil)
        try await ChannelRestrictor.restrict(request, releases: rig.d.releases.path, channel: "stable", signers: [rig.guardKey])
        let first = try Data(contentsOf: URL(fileURLWithPath: path))

        // A second request made when there was none: refused, the first stays.
        request.target = try TargetExpression(parsing: "not store = 14")
        let error = await #expect(throws: ArchivePublishingError.self) {
            try await ChannelRestrictor.restrict(request, releases: rig.d.releases.path, channel: "stable", signers: [rig.guardKey])
        }
        #expect(error?.code == .contended && error?.message.contains("restriction.json changed since it was read") == true)
        #expect(error?.kind.exitStatus == 75)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == first)
        // Made from the first: signed.
        request.basis = RestrictionBasis(first)
        let signed = try await ChannelRestrictor.restrict(request, releases: rig.d.releases.path, channel: "stable", signers: [rig.guardKey])
        #expect(signed.target?.description == "not store = 14")
    }

    /// 1 of 40 devices rolls back: nothing is written, exit 0; one failing device of one
    /// (min-devices) neither.
    @Test func theGuardLeavesAHealthyReleaseAlone() async throws {
        let rig = try await RestrictionRig()
        try await rig.d.installAndCommit(["1.0.0"])
        try rig.d.publish("1.1.0")
        let dir = try TemporaryDirectory("guard")
        let collector = try await Self.collector(dir, Self.trials("1.1.0", devices: 1..<41, failing: 1))
        let before = try TreeSnapshot(rig.d.releases.path)
        let run = try await Self.guardRun(rig, collector)
        #expect(run.status == 0, "\(run.errorOutput)")
        #expect(
            run.output
                == "com.example.notes 1.1.0 on stable: holds: 1 of 40 devices rolled it back (2.5 %; lower bound 0.4 %); "
                + "max-failure-rate: lower bound not above 10 %; 0 unpublished versions ignored; counting admitted devices and devices heard from before "
                + RFC3339.format(Self.historyBefore) + ", 0 others left out\n", "\(run.output)")
        #expect(try TreeSnapshot(rig.d.releases.path) == before)

        let loneDir = try TemporaryDirectory("guard")
        let lone = try await Self.collector(loneDir, Self.trials("1.1.0", devices: 1..<2, failing: 1))
        let one = try await Self.guardRun(rig, lone)
        #expect(one.status == 0, "\(one.errorOutput)")
        #expect(one.output.contains("holds: 1 of 1 device rolled it back (100 %; lower bound 20.7 %); min-devices"))
        #expect(try TreeSnapshot(rig.d.releases.path) == before)
        #expect(collector.stop() == 0 && lone.stop() == 0)
    }

    /// One device id sends 10,000 rollbacks of 1.1.0 (20 batches of 500): the collector
    /// counts it once, 1 of 30 devices, and nothing halts.
    @Test func tenThousandFailureReportsFromOneDeviceHaltNothing() async throws {
        let rig = try await RestrictionRig()
        try await rig.d.installAndCommit(["1.0.0"])
        try rig.d.publish("1.1.0")
        var batches = Self.trials("1.1.0", devices: 2..<31, failing: 0)
        batches.append(Self.batch(device: 1, [("trial-started", "1.1.0", ",\"version\":\"1.1.0\"")]))
        let rollback = ("rolled-back", "1.0.0", ",\"version\":\"1.1.0\",\"reason\":\"page-crashed\"")
        for b in 0..<20 {
            batches.append(Self.batch(device: 1, firstSeq: 2 + b * 500, Array(repeating: rollback, count: 500)))
        }
        let dir = try TemporaryDirectory("guard")
        let collector = try await Self.collector(dir, batches, arguments: ["--rate-per-device", "10000"])
        let before = try TreeSnapshot(rig.d.releases.path)
        let run = try await Self.guardRun(rig, collector)
        #expect(run.status == 0, "\(run.errorOutput)")
        #expect(run.output.contains("holds: 1 of 30 devices rolled it back"), "\(run.output)")
        #expect(try TreeSnapshot(rig.d.releases.path) == before)
        #expect(collector.stop() == 0)
    }

    /// A collector that is down: exit 69, one line naming it, the folder byte for byte as it was.
    @Test func aCollectorThatIsDownIs69AndWritesNothing() async throws {
        let rig = try await RestrictionRig()
        try await rig.d.installAndCommit(["1.0.0"])
        try rig.d.publish("1.1.0")
        let dir = try TemporaryDirectory("guard")
        let collector = try await Self.collector(dir, Self.trials("1.1.0", devices: 1..<41, failing: 40))
        #expect(collector.stop() == 0)
        let before = try TreeSnapshot(rig.d.releases.path)
        let run = try await Self.guardRun(rig, collector)
        #expect(run.status == 69, "\(run.output) \(run.errorOutput)")
        #expect(run.output.isEmpty)
        let lines = run.errorOutput.split(separator: "\n")
        #expect(lines.count == 1 && lines[0].hasPrefix("clientctl: ") && lines[0].contains("127.0.0.1:\(collector.port)"), "\(run.errorOutput)")
        #expect(try TreeSnapshot(rig.d.releases.path) == before)
    }

    /// `--revoke`: a device running the failing release leaves it for the one before.
    @Test func revokeMakesADeviceOnTheVersionLeaveIt() async throws {
        let rig = try await RestrictionRig()
        try await rig.d.installAndCommit(["1.0.0", "1.1.0"])
        let dir = try TemporaryDirectory("guard")
        let collector = try await Self.collector(dir, Self.trials("1.1.0", devices: 1..<41, failing: 30))
        let run = try await Self.guardRun(rig, collector, ["--revoke"])
        #expect(run.status == 3, "\(run.errorOutput)")
        #expect(run.output.contains("halted: 30 of 40 devices") && run.output.contains("pauses it and revokes 1.1.0 until"), "\(run.output)")
        #expect(try Self.restriction(rig).revoked == [Version(1, 1, 0)])
        let install = try await ClientctlBinary.run(["install", "--root", rig.d.layout.root, "--json"])
        #expect(install.status == 0, "\(install.errorOutput)")
        let object = try #require(try JSONSerialization.jsonObject(with: install.stdout) as? [String: Any])
        #expect(object["result"] as? String == "staged" && object["version"] as? String == "1.0.0", "\(install.output)")
        let status = try await rig.d.updater().status()
        #expect(status.blacklist == ["1.1.0"] && status.pending == "1.0.0")
        #expect(collector.stop() == 0)
    }

    /// Reports of versions the channel never published (a forged 9.9.9 failing everywhere,
    /// a 1.0.5 nobody signed) are ignored and counted; they are no baseline either.
    @Test func aVersionNeverPublishedIsIgnoredAndCounted() async throws {
        let rig = try await RestrictionRig()
        try await rig.d.installAndCommit(["1.0.0"])
        try rig.d.publish("1.1.0")
        let dir = try TemporaryDirectory("guard")
        let batches =
            Self.trials("1.1.0", devices: 1..<41, failing: 2) + Self.trials("9.9.9", devices: 41..<81, failing: 40)
            + Self.trials("1.0.5", devices: 81..<121, failing: 0)
        let collector = try await Self.collector(dir, batches)
        let before = try TreeSnapshot(rig.d.releases.path)
        let run = try await Self.guardRun(rig, collector, ["--baseline"])
        #expect(run.status == 0, "\(run.errorOutput)")
        #expect(
            run.output.hasSuffix(
                "; 2 unpublished versions ignored; counting admitted devices and devices heard from before \(RFC3339.format(Self.historyBefore)), 0 others left out\n"
            ), "\(run.output)")
        #expect(run.output.contains("(baseline 1.0.0 has 0 trials, fewer than 20: max-failure-rate alone)"), "\(run.output)")
        let json = try await Self.guardRun(rig, collector, ["--baseline", "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: json.stdout) as? [String: Any])
        #expect(object["ignoredVersions"] as? Int == 2 && object["ignored"] as? [String] == ["9.9.9", "1.0.5"], "\(json.output)")
        #expect(object["action"] as? String == "hold")
        #expect(try TreeSnapshot(rig.d.releases.path) == before)
        #expect(collector.stop() == 0)
    }

    /// `--every 1s`: a pass a second, each one line (halted, then already halted); SIGTERM
    /// ends it with 0.
    @Test func everyRepeatsUntilSIGTERM() async throws {
        let rig = try await RestrictionRig()
        try await rig.d.installAndCommit(["1.0.0"])
        try rig.d.publish("1.1.0")
        let dir = try TemporaryDirectory("guard")
        let collector = try await Self.collector(dir, Self.trials("1.1.0", devices: 1..<41, failing: 12))
        let out = dir("guard.out")
        let process = try ChildProcess(
            ClientctlBinary.path, Self.arguments(rig, collector) + ["--every", "1s"], standardOutput: .file(out),
            standardError: .file(dir("guard.err"))
        ).start()
        var text = ""
        try? await Poll.until("two lines of the guard", timeout: 60, every: .milliseconds(50)) {
            text = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").count >= 2
        }
        process.signalChild(SIGTERM)
        let ended = await process.wait()
        #expect(ended.termination.shellStatus == 0, "\((try? String(contentsOfFile: dir("guard.err"), encoding: .utf8)) ?? "")")
        let lines = text.split(separator: "\n")
        #expect(lines.count >= 2, "\(text)")
        #expect(lines.first?.contains(": halted: 12 of 40") == true && lines.dropFirst().allSatisfy { $0.contains(": already halted: 12 of 40") })
        #expect(collector.stop() == 0)
    }

    /// `--push`: the restriction the guard signs reaches the store (as `push` uploads it),
    /// and a device checking the store is held back.
    @Test func pushUploadsTheRestriction() async throws {
        let s3 = try await SeaweedS3.shared()
        let area = s3.freshArea("guard")
        let rig = try await RestrictionRig()
        try await rig.d.installAndCommit(["1.0.0"])
        try rig.d.publish("1.1.0")
        let dir = try TemporaryDirectory("guard")
        let collector = try await Self.collector(dir, Self.trials("1.1.0", devices: 1..<41, failing: 12))
        let run = try await ClientctlBinary.run(
            Self.arguments(rig, collector) + ["--push", "s3://\(area)", "--endpoint", s3.endpoint], environment: s3.environment)
        #expect(run.status == 3, "\(run.errorOutput)")
        #expect(run.output.contains("; pushed stable to s3://\(area)/stable:"), "\(run.output)")
        let local = try Data(contentsOf: URL(fileURLWithPath: Self.restrictionPath(rig)))
        #expect(try await s3.get("\(area)/stable/restriction.json").body == local)
        #expect(try await s3.get("\(area)/stable/manifest.json").status == 200)
        #expect(collector.stop() == 0)
    }
}

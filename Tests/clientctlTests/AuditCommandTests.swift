import ClientFoundation
import Foundation
import SignedManifest
import TestSupport
import Testing

/// `clientctl audit verify` and `audit show`, and `--audit FILE` on the acts that sign
/// (`rollout restrict`, `rollout pause`, `publish`, `rollout guard`) and on `fleet admit`,
/// all through the built binary on real release folders and a real collector
/// (docs/audit-trail.md).
@Suite struct AuditCommandTests {
    static let fields: Set<String> = ["seq", "time", "operator", "address", "act", "target", "before", "after", "result"]

    @discardableResult
    static func clientctl(_ args: [String], expect status: Int32 = 0, sourceLocation: SourceLocation = #_sourceLocation) async throws
        -> Subprocess.Result
    {
        let r = try await ClientctlBinary.run(args)
        #expect(r.status == status, "clientctl \(args.joined(separator: " ")): \(r.output) \(r.errorOutput)", sourceLocation: sourceLocation)
        return r
    }

    /// `audit show FILE --json` as objects.
    static func show(_ trail: String) async throws -> [[String: Any]] {
        let r = try await clientctl(["audit", "show", trail, "--json"])
        return try #require(try JSONSerialization.jsonObject(with: r.stdout) as? [[String: Any]])
    }

    static func lines(_ path: String) throws -> [Data] {
        try Data(contentsOf: URL(fileURLWithPath: path)).split(separator: 0x0A, omittingEmptySubsequences: false).dropLast().map { Data($0) }
    }

    static func write(_ lines: [Data], to path: String) throws {
        try Data(lines.map { $0 + Data([0x0A]) }.joined()).write(to: URL(fileURLWithPath: path))
    }

    /// A rig whose 1.0.0 is restricted three times on the trail: paused, capped, a pause
    /// attempted with a key that is not the rollout role's (refused, recorded).
    static func restrictedThrice() async throws -> (RestrictionRig, String) {
        let rig = try await RestrictionRig()
        try rig.d.publish("1.0.0")
        let trail = rig.d.tmp("audit.jsonl")
        try await rig.restrict(["--pause", "--audit", trail, "--audit-operator", "ada"])
        try await rig.restrict(["--percent", "5", "--audit", trail, "--audit-operator", "bob"])
        try await clientctl(
            ["rollout", "restrict", "stable", "--out", rig.d.releases.path, "--key", rig.releasePEM, "--pause", "--audit", trail], expect: 65)
        return (rig, trail)
    }

    /// Each act on the trail as `show --json` prints it, signed by the key it signed with:
    /// the rollout key's entries and the refused attempt, signed by the release key.
    @Test func restrictionsAndARefusedAttemptAreOnTheTrail() async throws {
        let (rig, trail) = try await Self.restrictedThrice()
        let entries = try await Self.show(trail)
        #expect(entries.count == 3)
        #expect(entries.allSatisfy { Set($0.keys) == Self.fields }, "\(entries)")
        #expect(entries.map { $0["seq"] as? Int } == [1, 2, 3])
        #expect(entries.map { $0["act"] as? String } == ["rollout-restrict", "rollout-restrict", "rollout-restrict"])
        #expect(entries.map { $0["operator"] as? String } == ["ada", "bob", ProcessInfo.processInfo.environment["USER"] ?? "unknown"])
        #expect(entries.allSatisfy { ($0["address"] as? String)?.hasPrefix("cli@") == true && $0["target"] as? String == "stable 1.0.0" })
        #expect(entries[0]["before"] as? String == "1.0.0 100%")
        #expect(entries[0]["after"] as? String == "1.0.0 100%, halted")
        #expect(entries[1]["after"] as? String == "1.0.0 100%, capped at 5%")
        #expect(entries[0]["result"] as? String == "ok" && entries[1]["result"] as? String == "ok")
        let refused = try #require(entries[2]["result"] as? String)
        #expect(refused.hasPrefix("failed: ") && refused.contains("is not a rollout key"), "\(refused)")
        #expect(entries[2]["before"] as? String == entries[2]["after"] as? String)

        let both = try await Self.clientctl([
            "audit", "verify", trail, "--trust", rig.d.tmp("keys/guard.pub.pem"), "--trust",
            ClientctlBinary.packagePath("Keys/test-signing.pub.pem"),
        ])
        #expect(both.output.hasPrefix("\(trail): 3 entries intact, head "), "\(both.output)")
        let head = String(both.output.dropFirst("\(trail): 3 entries intact, head ".count).prefix(64))
        #expect(head.count == 64 && head.allSatisfy(\.isHexDigit))
        #expect(head == Digest.hex(.sha256, of: try Self.lines(trail)[2]))
        // The text listing ends with the same count and head.
        let text = try await Self.clientctl(["audit", "show", trail])
        #expect(text.output.hasSuffix("\(trail): 3 entries, head \(head) (not verified)\n"), "\(text.output)")
        #expect(text.output.hasPrefix("1  "), "\(text.output)")
        #expect(text.output.contains("ada from cli@"), "\(text.output)")
        #expect(text.output.contains("rollout-restrict stable 1.0.0  1.0.0 100% → 1.0.0 100%, halted  ok"), "\(text.output)")

        // Trusting the rollout key alone, the release key's entry is named.
        let one = try await Self.clientctl(["audit", "verify", trail, "--trust", rig.d.tmp("keys/guard.pub.pem")], expect: 65)
        #expect(one.errorOutput.contains("\(trail): entry 3 was appended without the key"), "\(one.errorOutput)")
        #expect(one.output.isEmpty)
    }

    /// `verify` exits 65 naming the first entry changed, dropped or cut off; 66 without a file.
    @Test func verifyNamesTheFirstBrokenEntry() async throws {
        let (rig, trail) = try await Self.restrictedThrice()
        let trust = [
            "--trust", rig.d.tmp("keys/guard.pub.pem"), "--trust", ClientctlBinary.packagePath("Keys/test-signing.pub.pem"),
        ]
        let original = try Self.lines(trail)

        var changed = original
        changed[1] = Data(String(decoding: original[1], as: UTF8.self).replacingOccurrences(of: "\"bob\"", with: "\"bub\"").utf8)
        #expect(changed[1] != original[1])
        try Self.write(changed, to: trail)
        let c = try await Self.clientctl(["audit", "verify", trail] + trust, expect: 65)
        #expect(c.errorOutput == "clientctl: \(trail): entry 2 was changed: its signature does not verify\n", "\(c.errorOutput)")

        try Self.write([original[0], original[2]], to: trail)
        let d = try await Self.clientctl(["audit", "verify", trail] + trust, expect: 65)
        #expect(d.errorOutput.contains("\(trail): entry 2 is missing"), "\(d.errorOutput)")

        try Self.write([original[1], original[0], original[2]], to: trail)
        let s = try await Self.clientctl(["audit", "verify", trail] + trust + ["--json"], expect: 65)
        let object = try #require(try JSONSerialization.jsonObject(with: s.stdout) as? [String: Any])
        #expect(object["intact"] as? Bool == false && object["entry"] as? Int == 1, "\(object)")
        #expect((object["reason"] as? String)?.contains("reordered") == true, "\(object)")

        try Self.write(original, to: trail)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: trail))
        try handle.truncate(atOffset: try handle.seekToEnd() - 5)
        try handle.close()
        let t = try await Self.clientctl(["audit", "verify", trail] + trust, expect: 65)
        #expect(t.errorOutput.contains("\(trail): entry 3 is cut off"), "\(t.errorOutput)")

        let missing = try await Self.clientctl(["audit", "verify", rig.d.tmp("none.jsonl")] + trust, expect: 66)
        #expect(missing.errorOutput.contains("none.jsonl does not exist"), "\(missing.errorOutput)")
    }

    /// Eight processes append to one trail at once: every one lands, numbered in order and
    /// chained (an act the channel's lock turned away is on it as failed).
    @Test func concurrentProcessesAllLandOnTheTrail() async throws {
        let rig = try await RestrictionRig()
        try rig.d.publish("1.0.0")
        let trail = rig.d.tmp("audit.jsonl")
        let runs = 8
        let statuses = try await withThrowingTaskGroup(of: Int32.self) { group in
            for k in 1...runs {
                let args = [
                    "rollout", "restrict", "stable", "--out", rig.d.releases.path, "--key", rig.d.tmp("keys/guard.pem"), "--percent", "\(k)",
                    "--audit", trail, "--audit-operator", "op\(k)",
                ]
                group.addTask { try await ClientctlBinary.run(args).status }
            }
            var all: [Int32] = []
            for try await status in group { all.append(status) }
            return all
        }
        #expect(statuses.allSatisfy { $0 == 0 || $0 == 75 }, "\(statuses)")
        let entries = try await Self.show(trail)
        #expect(entries.map { $0["seq"] as? Int } == Array(1...runs).map { $0 })
        #expect(Set(entries.compactMap { $0["operator"] as? String }) == Set((1...runs).map { "op\($0)" }))
        #expect(entries.filter { $0["result"] as? String == "ok" }.count == statuses.filter { $0 == 0 }.count)
        let verified = try await Self.clientctl(["audit", "verify", trail, "--trust", rig.d.tmp("keys/guard.pub.pem")])
        #expect(verified.output.hasPrefix("\(trail): \(runs) entries intact"), "\(verified.output)")
    }

    /// A trail whose last line is cut off refuses the act: nothing is signed, nothing written.
    @Test func aBrokenTrailRefusesTheAct() async throws {
        let (rig, trail) = try await Self.restrictedThrice()
        var bytes = try Data(contentsOf: URL(fileURLWithPath: trail))
        bytes.removeLast()
        try bytes.write(to: URL(fileURLWithPath: trail))
        let before = try TreeSnapshot(rig.d.releases.path)
        let r = try await rig.restrict(["--percent", "1", "--audit", trail], expect: 65)
        #expect(r.errorOutput.contains("nothing is appended to it"), "\(r.errorOutput)")
        #expect(try TreeSnapshot(rig.d.releases.path) == before)
        #expect(try Data(contentsOf: URL(fileURLWithPath: trail)) == bytes)
    }

    /// An operator name holding terminal controls: stored, shown escaped, never raw.
    @Test func controlsInAnEntryNeverReachTheTerminal() async throws {
        let rig = try await RestrictionRig()
        try rig.d.publish("1.0.0")
        let trail = rig.d.tmp("audit.jsonl")
        try await rig.restrict(["--pause", "--audit", trail, "--audit-operator", "eve\u{1b}]0;owned\u{7}\u{202e}"])
        let text = try await Self.clientctl(["audit", "show", trail])
        #expect(!text.stdout.contains(0x1B) && !text.stdout.contains(0x07))
        #expect(text.output.contains("eve\\u{1b}]0;owned\\u{7}\\u{202e} from cli@"), "\(text.output)")
        let json = try await Self.clientctl(["audit", "show", trail, "--json"])
        #expect(!json.stdout.contains(0x1B) && !json.output.contains("\u{202e}"))
        let entries = try #require(try JSONSerialization.jsonObject(with: json.stdout) as? [[String: Any]])
        #expect(entries.first?["operator"] as? String == "eve\u{1b}]0;owned\u{7}\u{202e}")
    }

    /// `publish` and `rollout pause` sign their entries with the release key.
    @Test func publishAndPauseAreRecordedWithTheReleaseKey() async throws {
        let rig = try await RestrictionRig()
        let trail = rig.d.tmp("audit.jsonl")
        let client = try ReleaseFolder.makeClient(at: rig.d.tmp("client"), version: "2.0.0")
        let out = rig.d.tmp("fresh")
        try await Self.clientctl([
            "publish", client, "--app", "com.example.notes", "--channel", "beta", "--version", "2.0.0", "--min-shell", "1.0.0",
            "--key", rig.releasePEM, "--out", out, "--rollout", "25", "--audit", trail, "--audit-operator", "ada",
        ])
        try await Self.clientctl(["rollout", "pause", "beta", "--out", out, "--key", rig.releasePEM, "--audit", trail, "--audit-operator", "ada"])
        try Data("\(String(repeating: "a", count: 32))\n\(String(repeating: "b", count: 32))\n".utf8).write(
            to: URL(fileURLWithPath: rig.d.tmp("pilot.txt")))
        try await Self.clientctl([
            "cohort", "set", "beta", "pilot", "--ids", rig.d.tmp("pilot.txt"), "--out", out, "--key", rig.releasePEM, "--audit", trail,
        ])
        let entries = try await Self.show(trail)
        #expect(entries.map { $0["act"] as? String } == ["publish", "rollout-pause", "cohort-set"])
        #expect(entries.map { $0["target"] as? String } == ["beta 2.0.0", "beta 2.0.0", "beta 2.0.0 cohort pilot"])
        #expect(entries[2]["before"] as? String == "2.0.0 paused, no cohort pilot", "\(entries)")
        #expect(entries[2]["after"] as? String == "2.0.0 paused, cohort pilot 2 ids", "\(entries)")
        #expect(entries[0]["before"] as? String == "no release" && entries[0]["after"] as? String == "2.0.0 25%", "\(entries)")
        #expect(entries[1]["before"] as? String == "2.0.0 25%" && entries[1]["after"] as? String == "2.0.0 paused", "\(entries)")
        try await Self.clientctl(["audit", "verify", trail, "--trust", ClientctlBinary.packagePath("Keys/test-signing.pub.pem")])
    }

    /// The guard's halt is on the trail once, signed by the rollout key; the next pass,
    /// already halted, adds nothing.
    @Test func theGuardsHaltIsRecordedOnce() async throws {
        let rig = try await RestrictionRig()
        try await rig.d.installAndCommit(["1.0.0"])
        try rig.d.publish("1.1.0")
        let dir = try TemporaryDirectory("guard-audit")
        let collector = try await RolloutGuardTests.collector(dir, RolloutGuardTests.trials("1.1.0", devices: 1..<41, failing: 12))
        let trail = rig.d.tmp("audit.jsonl")
        let run = try await RolloutGuardTests.guardRun(rig, collector, ["--audit", trail, "--audit-operator", "guard@ops"])
        #expect(run.status == 3, "\(run.errorOutput)")
        #expect(run.output.contains("; halt recorded in \(trail) as entry 1"), "\(run.output)")
        let again = try await RolloutGuardTests.guardRun(rig, collector, ["--audit", trail, "--audit-operator", "guard@ops"])
        #expect(again.status == 3, "\(again.errorOutput)")
        #expect(again.output.contains("; no new halt for the audit trail"), "\(again.output)")
        let entries = try await Self.show(trail)
        #expect(entries.count == 1, "\(entries)")
        #expect(entries.first?["act"] as? String == "guard-halt" && entries.first?["operator"] as? String == "guard@ops")
        #expect(entries.first?["before"] as? String == "1.1.0 100%" && entries.first?["after"] as? String == "1.1.0 100%, halted", "\(entries)")
        try await Self.clientctl(["audit", "verify", trail, "--trust", rig.d.tmp("keys/guard.pub.pem")])
        #expect(collector.stop() == 0)
    }

    /// `fleet admit` uses a token: its entry is signed by `--audit-key`, one per device.
    @Test func fleetAdmitIsSignedByTheAuditKey() async throws {
        let dir = try TemporaryDirectory("audit-admit")
        let admin = try GuardBrakeTests.adminToken(dir)
        try await Self.clientctl(["keygen", "--out", dir("audit")])
        let collector = try await CollectProcess(
            database: "sqlite:" + dir("reports.db"), arguments: ["--admission", "manual", "--admin-token-file", admin], scratch: dir.path)
        let device = try Ed25519.PrivateKey.generate()
        let key = GuardBrakeTests.hex(device)
        let trail = dir("audit.jsonl")
        let base = ["fleet", "admit", "--collector", collector.baseURL, "--token-file", admin]

        let unsigned = try await Self.clientctl(base + ["--audit", trail, key], expect: 64)
        #expect(unsigned.errorOutput.contains("--audit needs --audit-key"), "\(unsigned.errorOutput)")
        #expect(!FileManager.default.fileExists(atPath: trail))

        try await Self.clientctl(base + ["--audit", trail, "--audit-key", dir("audit.pem"), "--audit-operator", "ada", key])
        let entries = try await Self.show(trail)
        #expect(entries.count == 1)
        #expect(
            entries.first?["act"] as? String == "admit" && entries.first?["target"] as? String == key && entries.first?["result"] as? String == "ok")
        let verified = try await Self.clientctl(["audit", "verify", trail, "--trust", dir("audit.pub.pem")])
        #expect(verified.output.hasPrefix("\(trail): 1 entry intact, head "), "\(verified.output)")

        // A refused token: the attempt is on the trail too.
        try Data("wrong-token-0123456789abcdef\n".utf8).write(to: URL(fileURLWithPath: dir("wrong.token")))
        chmod(dir("wrong.token"), 0o600)
        try await Self.clientctl(
            [
                "fleet", "reject", "--collector", collector.baseURL, "--token-file", dir("wrong.token"), "--audit", trail, "--audit-key",
                dir("audit.pem"), key,
            ],
            expect: 78)
        let after = try await Self.show(trail)
        #expect(after.count == 2)
        #expect(after.last?["act"] as? String == "reject")
        #expect((after.last?["result"] as? String)?.hasPrefix("refused: ") == true, "\(after)")
        try await Self.clientctl(["audit", "verify", trail, "--trust", dir("audit.pub.pem")])
        #expect(collector.stop() == 0)
    }
}

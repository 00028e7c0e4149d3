import ApplyPolicy
import ClientFoundation
import ClientUpdater
import Foundation
import ReleaseSigning
import SignedArchive
import SignedManifest
import StrictJSON
import TestSupport
import Testing

/// A device following a channel whose trust root has a `rollout` role, and a release folder
/// restricted by that role's key. The root is made and signed by the built `clientctl`
/// (`root init --rollout-key`, `root sign`), restrictions by `clientctl rollout restrict`
/// or, for what the command refuses to write, signed here with the same key; the device
/// checks over HTTP on 127.0.0.1 (docs/formats.md#restrictions).
struct RestrictionRig {
    let d: DeviceFixture
    /// The rollout role's key (`keys/guard.pem`, `keys/guard.pub.pem`).
    let guardKey: Ed25519.PrivateKey
    var keys: String { d.tmp("keys") }
    var releasePEM: String { ClientctlBinary.packagePath("Keys/test-signing.pem") }

    /// With `rolloutRole` false the channel publishes no root: the device keeps the
    /// implicit root of its `--trust` key.
    init(rolloutRole: Bool = true) async throws {
        d = try DeviceFixture()
        try FileManager.default.createDirectory(atPath: d.tmp("keys"), withIntermediateDirectories: true)
        try await Self.clientctl(["keygen", "--out", d.tmp("keys/guard")])
        guardKey = try Ed25519.PrivateKey(pemFile: d.tmp("keys/guard.pem"))
        guard rolloutRole else { return }
        let pub = ClientctlBinary.packagePath("Keys/test-signing.pub.pem")
        let draft = d.tmp("root-1.json")
        try await Self.clientctl([
            "root", "init", draft, "--app", "com.example.notes", "--channel", "stable", "--root-key", pub, "--release-key", pub,
            "--rollout-key", d.tmp("keys/guard.pub.pem"), "--expires", "365d",
        ])
        try await Self.clientctl(["root", "sign", draft, "--key", releasePEM])
        try d.releases.writeRootBytes(Data(contentsOf: URL(fileURLWithPath: draft)), as: 1)
    }

    @discardableResult
    static func clientctl(_ args: [String], expect status: Int32 = 0, sourceLocation: SourceLocation = #_sourceLocation) async throws
        -> Subprocess.Result
    {
        let r = try await ClientctlBinary.run(args)
        #expect(r.status == status, "clientctl \(args.joined(separator: " ")): \(r.errorOutput)", sourceLocation: sourceLocation)
        return r
    }

    /// `clientctl rollout restrict stable --out … --key guard.pem ARGS`.
    @discardableResult
    func restrict(_ args: [String], expect status: Int32 = 0, sourceLocation: SourceLocation = #_sourceLocation) async throws
        -> Subprocess.Result
    {
        try await Self.clientctl(
            ["rollout", "restrict", "stable", "--out", d.releases.path, "--key", d.tmp("keys/guard.pem")] + args, expect: status,
            sourceLocation: sourceLocation)
    }

    /// The current manifest of the folder.
    func manifest() throws -> Manifest {
        let data = try Data(contentsOf: URL(fileURLWithPath: d.releases.channelDirectory + "/manifest.json"))
        return try ManifestVerifier(trustedKeys: [try ReleaseFolder.testKey().publicKey]).verify(bytes: Array(data)).get()
    }

    /// Writes `restriction.json` from `draft`'s object after `edit`, signed by `signers`
    /// over its RFC 8785 bytes: what the command would refuse to write.
    func writeRestriction(_ draft: RestrictionDraft, signedBy signers: [Ed25519.PrivateKey], edit: (inout JSONObject) -> Void = { _ in }) throws {
        var o = draft.unsignedObject
        edit(&o)
        let message = CanonicalJSON.serialize(o)
        o["signatures"] = .array(
            try signers.map { DocumentSignature(keyId: $0.publicKey.keyId, signature: try $0.signature(for: message)).jsonValue })
        try Data(JSONPrettyPrinter.render(.object(o))).write(to: URL(fileURLWithPath: d.releases.channelDirectory + "/restriction.json"))
    }
}

@Suite struct RolloutRestrictionTests {
    /// The rollout key pauses a release: a device not yet on it stays, also on the next
    /// (304) checks; the manifest's own rollout is untouched. A new manifest signed by the
    /// release role (`rollout set`) supersedes the restriction and the device takes it.
    @Test func aRestrictionPausesUntilANewManifestSupersedesIt() async throws {
        let rig = try await RestrictionRig()
        try await rig.d.installAndCommit(["1.0.0"])
        try rig.d.publish("1.1.0")
        let written = try await rig.restrict(["--pause", "--expires-in", "12h"])
        #expect(written.output.contains("com.example.notes 1.1.0 on stable: restricted (paused) until "), "\(written.output)")
        let restriction = try Restriction.parse(
            Data(contentsOf: URL(fileURLWithPath: rig.d.releases.channelDirectory + "/restriction.json")), source: "r")
        #expect(
            restriction.restricts(try rig.manifest()) && restriction.paused && restriction.expires.timeIntervalSince(restriction.issued) == 43_200)

        rig.d.server.clearLog()
        for _ in 0..<2 {
            let report = try await rig.d.updater().install()
            #expect(
                report.result == .skipped && report.message.contains("the rollout of release 1.1.0 is paused by the rollout role's restriction until")
            )
            #expect(try await rig.d.updater().status().installed.map(\.version) == ["1.0.0"])
        }
        // The second check's restriction request was conditional (kept bytes, ETag).
        #expect(rig.d.requests(to: "/stable/restriction.json").count == 2)
        #expect(rig.d.requests(to: "/stable/restriction.json").last?.headers["if-none-match"] != nil)

        // Re-signing lifts the restriction's halt: only on purpose (issue 65).
        let before = try TreeSnapshot(rig.d.releases.path)
        let refused = try await RestrictionRig.clientctl(
            ["rollout", "set", "stable", "--percent", "100", "--out", rig.d.releases.path, "--key", rig.releasePEM], expect: 77)
        #expect(refused.errorOutput.contains("/stable/restriction.json pauses it (release 1.1.0, until "), "\(refused.errorOutput)")
        #expect(
            refused.errorOutput.contains(
                "rollout set re-signs the manifest and would lift that halt; give --lift-halt to lift it, nothing was changed"),
            "\(refused.errorOutput)")
        #expect(try TreeSnapshot(rig.d.releases.path) == before)
        try await RestrictionRig.clientctl([
            "rollout", "set", "stable", "--percent", "100", "--out", rig.d.releases.path, "--key", rig.releasePEM, "--lift-halt",
        ])
        let report = try await rig.d.updater().install()
        #expect(report.result == .installed && report.version == "1.1.0", "\(report)")
    }

    /// A cap below the manifest's percent holds a device back; `--revoke` of the release's
    /// own version makes a device running it leave it, as `revoke` does.
    @Test func aRestrictionCapsThePercentAndRevokesTheReleaseItself() async throws {
        let rig = try await RestrictionRig()
        try await rig.d.installAndCommit(["1.0.0"])
        try rig.d.publish("1.1.0")
        try await rig.restrict(["--percent", "0"])
        let held = try await rig.d.updater().install()
        #expect(held.result == .skipped && held.message.contains("is rolling out to 0 % of devices (capped by the rollout role's restriction until"))

        let onIt = try await RestrictionRig()
        try await onIt.d.installAndCommit(["1.0.0", "1.1.0"])
        try await onIt.restrict(["--pause", "--revoke", "1.1.0"])
        let left = try await onIt.d.updater().install()
        #expect(left.result == .staged && left.version == "1.0.0", "\(left)")
        #expect(left.message.hasPrefix("the rollout role's restriction of release 1.1.0 revokes 1.1.0: this device leaves it"))
        let status = try await onIt.d.updater().status()
        #expect(status.blacklist == ["1.1.0"] && status.pending == "1.0.0")
    }

    enum Refused: String, CaseIterable, CustomTestStringConvertible {
        case higherPercent, laterExpiry, releaseKeyOnly, futureVersion, carriesAURL, notSemVer
        var testDescription: String { rawValue }
    }

    /// What the rollout role could express wrongly is refused as a bad release (exit 65)
    /// and the device is left exactly as it was: nothing installed, nothing revoked, the
    /// restriction not even kept. The command refuses to write the first ones itself.
    @Test(arguments: Refused.allCases)
    func aRestrictionAskingForMoreIsRefusedAndTheDeviceStaysAsItWas(_ refused: Refused) async throws {
        let rig = try await RestrictionRig()
        try await rig.d.installAndCommit(["1.0.0"])
        let expires = Date().addingTimeInterval(2 * 86_400)
        try rig.d.releases.publish(
            "1.1.0", archive: ReleaseFolder.tarGz(of: ReleaseFolder.makeClient(at: rig.d.tmp("src-1.1.0"), version: "1.1.0")), expires: expires
        ) {
            $0["rollout"] = .integer(10)
        }
        let m = try rig.manifest()
        var draft = RestrictionDraft(for: m, issued: Date(), expires: Date().addingTimeInterval(3_600), paused: true)
        var signers = [rig.guardKey]
        var edit: (inout JSONObject) -> Void = { _ in }
        let expected: String
        switch refused {
        case .higherPercent:
            let cli = try await rig.restrict(["--percent", "50"], expect: 64)
            #expect(cli.errorOutput.contains("percent 50 is above the 10 % release 1.1.0's manifest allows"))
            draft.percent = 50
            expected = "percent 50 is above the 10 % release 1.1.0's manifest allows"
        case .laterExpiry:
            let cli = try await rig.restrict(["--pause", "--expires-in", "10d"], expect: 64)
            #expect(cli.errorOutput.contains("after the manifest of release 1.1.0"))
            draft.expires = expires.addingTimeInterval(86_400)
            expected = "after the manifest of release 1.1.0"
        case .releaseKeyOnly:
            signers = [try ReleaseFolder.testKey()]
            let cli = try await RestrictionRig.clientctl(
                ["rollout", "restrict", "stable", "--out", rig.d.releases.path, "--key", rig.releasePEM, "--pause"], expect: 65)
            #expect(cli.errorOutput.contains("is not a rollout key of trust root 1"))
            expected = "signed by 0 of trust root 1's rollout keys, 1 needed (\(signers[0].publicKey.keyId) is not a rollout key)"
        case .futureVersion:
            draft.revoked = [Version(1, 2, 0)]
            expected = "revokes 1.2.0, above release 1.1.0: only published versions can be revoked"
        case .carriesAURL:
            edit = { $0["url"] = .string("https://attacker.example/v9.tar.gz") }
            expected = "field 'url' is not a member of a restriction"
        case .notSemVer:
            edit = { $0["revoked"] = .array([.string("v1.0.0")]) }
            expected = "not a SemVer 2.0 version"
        }
        try rig.writeRestriction(draft, signedBy: signers, edit: edit)
        let before = try rig.d.snapshot()
        await #expect {
            try await rig.d.updater().install()
        } throws: { error in
            let e = error as? SignedManifestError
            return e?.code == .restrictionRefused && e?.kind == .dataError && e?.message.contains(expected) == true
        }
        #expect(try rig.d.snapshot() == before)
        if refused == .releaseKeyOnly {
            // The built binary reports it the same way: a bad release, exit 65.
            let cli = try await RestrictionRig.clientctl(["install", "--root", rig.d.layout.root], expect: 65)
            #expect(cli.errorOutput.contains("only the rollout role may restrict a release"))
            #expect(try rig.d.snapshot() == before)
        }
    }

    /// A restriction holds until its `expires`: past it the manifest's own rules apply
    /// again (the device's clock is injected: nothing sleeps).
    @Test func aRestrictionPastItsExpiryStopsHolding() async throws {
        let rig = try await RestrictionRig()
        try await rig.d.installAndCommit(["1.0.0"])
        try rig.d.publish("1.1.0")
        try await rig.restrict(["--pause", "--expires-in", "1h"])
        #expect(try await rig.d.updater().install().result == .skipped)
        let later = Date().addingTimeInterval(2 * 3_600)
        let report = try await rig.d.updater(now: { later }).install()
        #expect(report.result == .installed && report.version == "1.1.0", "\(report)")
    }

    /// A device whose root has no rollout role — here the implicit root of its `--trust`
    /// key — never asks for restrictions and ignores them: the release role alone decides.
    @Test func theImplicitRootIgnoresRestrictions() async throws {
        let rig = try await RestrictionRig(rolloutRole: false)
        try await rig.d.installAndCommit(["1.0.0"])
        try rig.d.publish("1.1.0")
        // The command refuses a folder without a rollout role …
        let cli = try await rig.restrict(["--pause"], expect: 66)
        #expect(cli.errorOutput.contains("has no trust root with a rollout role"))
        // … and a restriction written anyway changes nothing.
        try rig.writeRestriction(
            RestrictionDraft(for: try rig.manifest(), issued: Date(), expires: Date().addingTimeInterval(3_600), paused: true),
            signedBy: [rig.guardKey])
        let report = try await rig.d.updater().install()
        #expect(report.result == .installed && report.version == "1.1.0")
        #expect(rig.d.requests(to: "/stable/restriction.json").isEmpty)
    }
}

/// The rollout role and apply policies (docs/apply-policies.md): a restriction may make
/// devices wait longer before they switch, never hurry them.
@Suite struct RestrictionApplyTests {
    @Test func aRestrictionMakesDevicesWaitLongerAndTheDeviceObeysIt() async throws {
        let rig = try await RestrictionRig()
        try await rig.d.installAndCommit(["1.0.0"])
        try rig.d.publish("1.1.0") { $0["apply"] = .object(["mode": .string("now")]) }
        let written = try await rig.restrict(["--apply", "window"])
        #expect(written.output.contains("apply window"), "\(written.output)")
        let report = try await rig.d.updater().install()
        #expect(report.result == .installed && report.version == "1.1.0", "\(report)")
        let status = try await rig.d.updater().status()
        let line = try #require(status.apply)
        #expect(line.contains("(apply window") && line.contains("waiting for a maintenance window"), "\(line)")
    }

    @Test func aRestrictionThatWouldHurryDevicesIsRefusedAndNothingWritten() async throws {
        let rig = try await RestrictionRig()
        try rig.d.publish("1.1.0") { $0["apply"] = .object(["mode": .string("window")]) }
        let before = try TreeSnapshot(rig.d.releases.path)
        for (args, says) in [
            (["--apply", "now"], "now"),
            (["--apply", "idle", "--idle-seconds", "60"], "idle"),
            (["--apply", "window", "--deadline", "2d"], "deadline"),
        ] {
            let r = try await rig.restrict(args, expect: 64)
            #expect(r.errorOutput.contains(says) && r.errorOutput.contains("wait longer"), "\(args): \(r.errorOutput)")
        }
        #expect(try TreeSnapshot(rig.d.releases.path) == before)
        // Signed anyway (what the command refuses to write): the device refuses it as a bad
        // release and keeps the release's own policy.
        var draft = RestrictionDraft(
            for: try rig.manifest(), issued: Date().addingTimeInterval(-60), expires: Date().addingTimeInterval(3_600))
        draft.apply = try ApplyPolicy(mode: .now)
        try rig.writeRestriction(draft, signedBy: [rig.guardKey])
        await #expect(throws: (any Error).self) { try await rig.d.updater().install() }
    }
}

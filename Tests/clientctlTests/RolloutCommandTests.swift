import ClientFoundation
import ClientUpdater
import Foundation
import ReleaseSigning
import SignedManifest
import TestSupport
import Testing

/// The release side of staged rollouts and revocation, run as the built binary: publish
/// with --rollout and --revoke, `rollout set|pause|resume|complete`, `revoke`, each
/// re-signing the channel's manifest so that it still verifies with `openssl`.
@Suite struct RolloutCommandTests {
    let dir: TemporaryDirectory
    let sample = ClientctlBinary.packagePath("Fixtures/sample-client")
    let key = ClientctlBinary.packagePath("Keys/test-signing.pem")

    init() throws {
        dir = try TemporaryDirectory("rollout-cli")
    }

    @discardableResult
    func clientctl(_ args: [String], expect status: Int32 = 0, sourceLocation: SourceLocation = #_sourceLocation) async throws -> Subprocess.Result {
        let r = try await ClientctlBinary.run(args)
        #expect(r.status == status, "clientctl \(args.joined(separator: " ")): \(r.errorOutput)", sourceLocation: sourceLocation)
        return r
    }

    func publish(_ version: String, _ extra: [String] = [], expect status: Int32 = 0) async throws {
        try await clientctl(
            [
                "publish", sample, "--app", "com.example.notes", "--channel", "stable", "--version", version, "--min-shell", "1.0.0",
                "--key", key, "--out", dir("rel"),
            ] + extra, expect: status)
    }

    func manifest() throws -> Manifest {
        let data = try Data(contentsOf: URL(fileURLWithPath: dir("rel") + "/stable/manifest.json"))
        return try ManifestVerifier(trustedKeys: [try ReleaseFolder.testKey().publicKey]).verify(bytes: Array(data)).get()
    }

    @discardableResult
    func edit(_ args: [String], expect status: Int32 = 0) async throws -> Subprocess.Result {
        try await clientctl(args + ["--out", dir("rel"), "--key", key], expect: status)
    }

    @Test func aRolloutIsStagedPausedResumedAndCompletedByResigningTheManifest() async throws {
        try await publish("1.0.0", ["--rollout", "0:5,1d:25,2d:100"])
        var m = try manifest()
        let start = try #require(m.rollout?.start)
        #expect(m.rollout?.steps.map(\.percent) == [5, 25, 100] && m.rollout?.steps.map(\.seconds) == [0, 86_400, 172_800])
        #expect(m.expires == start.addingTimeInterval(172_800 + 48 * 3_600), "a rollout expires 48 h after its last step by default")
        let first = m.published

        let paused = try await edit(["rollout", "pause", "stable"])
        #expect(paused.output.contains("com.example.notes 1.0.0 on stable: rollout paused"))
        m = try manifest()
        #expect(m.rollout?.paused == true && m.rollout?.start == start && m.published > first, "a later published beats a replay")
        #expect(try ReleaseIndex.parse(Data(contentsOf: URL(fileURLWithPath: dir("rel") + "/stable/index.json"))).releases.first == m.object)

        try await edit(["rollout", "resume", "stable"])
        #expect(try manifest().rollout?.paused == false)
        try await edit(["rollout", "set", "stable", "--percent", "40"])
        #expect(try manifest().rollout == .percent(40))
        try await edit(["rollout", "complete", "stable"])
        m = try manifest()
        #expect(m.rollout == nil && m.expires == nil)
        let again = try await edit(["rollout", "pause", "stable"], expect: 64)
        #expect(again.errorOutput.contains("release 1.0.0 has no staged rollout to pause"))
    }

    @Test func revokingAddsVersionsAndNeverTheCurrentRelease() async throws {
        try await publish("1.0.0")
        try await publish("1.1.0", ["--revoke", "0.9.0"])
        #expect(try manifest().revoked == [Version(0, 9, 0)])
        try await edit(["revoke", "stable", "1.0.0"])
        #expect(try manifest().revoked == [Version(0, 9, 0), Version(1, 0, 0)])
        let refused = try await edit(["revoke", "stable", "1.1.0"], expect: 64)
        #expect(refused.errorOutput.contains("1.1.0 is the release the channel offers: publish a newer one that revokes it"))
        try await publish("1.2.0", ["--revoke", "1.2.0"], expect: 64)
    }

    /// A folder that publishes a trust root of threshold 2 refuses one key, and a key
    /// that is not a release key, before anything is written.
    @Test func aFolderWithATrustRootAsksForItsReleaseThreshold() async throws {
        try await publish("1.0.0")
        let releaseKeys = try (0..<2).map { _ in try Ed25519.PrivateKey.generate() }
        var draft = RootDraft(
            app: "com.example.notes", channel: "stable", expires: Date().addingTimeInterval(86_400),
            rootKeys: [try ReleaseFolder.testKey().publicKey], rootThreshold: 1, releaseKeys: releaseKeys.map(\.publicKey),
            releaseThreshold: 2)
        try await draft.sign(with: try ReleaseFolder.testKey())
        try FileManager.default.createDirectory(atPath: dir("rel") + "/stable/root", withIntermediateDirectories: true)
        try Data(try draft.root().jsonBytes()).write(to: URL(fileURLWithPath: dir("rel") + "/stable/root/1.json"))
        let before = try Data(contentsOf: URL(fileURLWithPath: dir("rel") + "/stable/manifest.json"))
        let stranger = try await edit(["rollout", "set", "stable", "--percent", "10"], expect: 65)
        #expect(stranger.errorOutput.contains("is not a release key of trust root 1"))
        let keyFiles = try releaseKeys.enumerated().map { i, k in
            let path = dir("release-\(i).pem")
            try Data(try k.pemRepresentation().utf8).write(to: URL(fileURLWithPath: path))
            return path
        }
        let one = try await clientctl(["rollout", "set", "stable", "--percent", "10", "--out", dir("rel"), "--key", keyFiles[0]], expect: 65)
        #expect(one.errorOutput.contains("trust root 1 needs 2 release keys; 1 given (repeat --key)"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir("rel") + "/stable/manifest.json")) == before)
        try await clientctl(["rollout", "set", "stable", "--percent", "10", "--out", dir("rel"), "--key", keyFiles[0], "--key", keyFiles[1]])
        let root = try TrustRoot.parse(Data(contentsOf: URL(fileURLWithPath: dir("rel") + "/stable/root/1.json")), source: "root")
        let data = try Data(contentsOf: URL(fileURLWithPath: dir("rel") + "/stable/manifest.json"))
        #expect(ManifestVerifier(root: root).verify(bytes: Array(data)).manifest?.rollout == .percent(10))
    }
}

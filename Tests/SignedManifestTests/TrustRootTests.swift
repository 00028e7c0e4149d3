import ClientUpdater
import Foundation
import ReleaseSigning
import SignedManifest
import StrictJSON
import TestSupport
import Testing

/// The shape rules of `root/N.json` (what ``TrustRoot/parse(_:source:)`` refuses before
/// any signature is looked at), and the editing rules of ``RootDraft``.
@Suite struct TrustRootTests {
    let keys: [Ed25519.PrivateKey]

    init() throws {
        keys = try (0..<3).map { _ in try Ed25519.PrivateKey.generate() }
    }

    func validObject() throws -> JSONObject {
        var draft = RootDraft(
            app: "com.example.notes", channel: "stable", expires: Date().addingTimeInterval(86_400),
            rootKeys: [keys[0].publicKey, keys[1].publicKey], rootThreshold: 2, releaseKeys: [keys[2].publicKey], releaseThreshold: 1)
        try draft.sign(with: keys[0])
        return try draft.root().object
    }

    static let cases: [(String, @Sendable (inout JSONObject) -> Void, String)] = [
        ("format", { $0["format"] = .string("tuf-root") }, "field 'format' is 'tuf-root', expected \"clientctl-root-v1\""),
        ("version 0", { $0["version"] = .integer(0) }, "field 'version' is 0: expected 1 to 1000000"),
        ("no expiry", { $0.removeValue(forKey: "expires") }, "required field 'expires' is missing"),
        (
            "key under another id",
            { o in
                guard case .object(var k)? = o["keys"], let first = k.keys.first, let other = k.keys.last, first != other else { return }
                k[first] = k[other]
                o["keys"] = .object(k)
            }, "a key is listed under its own id"
        ),
        (
            "unknown role",
            { o in
                guard case .object(var r)? = o["roles"] else { return }
                r["timestamp"] = r["root"]
                o["roles"] = .object(r)
            }, "role 'timestamp' is not root, release or rollout"
        ),
        (
            "threshold 0",
            { o in
                guard case .object(var r)? = o["roles"], case .object(var root)? = r["root"] else { return }
                root["threshold"] = .integer(0)
                r["root"] = .object(root)
                o["roles"] = .object(r)
            }, "role 'root' has threshold 0 with 2 distinct keys: expected 1 to 2"
        ),
        (
            "a role naming an unlisted key",
            { o in
                guard case .object(var r)? = o["roles"], case .object(var release)? = r["release"] else { return }
                release["keyIds"] = .array([.string("0123456789abcdef")])
                r["release"] = .object(release)
                o["roles"] = .object(r)
            }, "role 'release' names a key that 'keys' does not list"
        ),
        (
            "65 signatures",
            { o in
                guard case .array(let s)? = o["signatures"], let one = s.first else { return }
                o["signatures"] = .array(Array(repeating: one, count: 65))
            }, "field 'signatures' has 65 entries, at most 64"
        ),
    ]

    @Test(arguments: cases.indices)
    func aMalformedRootIsRefusedNamingTheField(index: Int) throws {
        let (name, edit, expected) = Self.cases[index]
        var object = try validObject()
        edit(&object)
        #expect(throws: (any Error).self, "\(name)") {
            try TrustRoot.parse(JSONPrettyPrinter.render(.object(object)), source: "root/1.json")
        }
        do {
            _ = try TrustRoot.parse(JSONPrettyPrinter.render(.object(object)), source: "root/1.json")
        } catch let error as SignedManifestError {
            #expect(error.code == .untrustedRoot)
            #expect(error.message.hasPrefix("root/1.json: ") && error.message.contains(expected), "\(name): \(error.message)")
        }
    }

    @Test func theValidRootParsesAndNeedsTwoRootSignatures() throws {
        let root = try TrustRoot.parse(JSONPrettyPrinter.render(.object(try validObject())), source: "root/1.json")
        #expect(root.version == 1 && root.root.threshold == 2 && root.selfSigners == [keys[0].publicKey.keyId])
        #expect(RootChain.verifyPinned(root.jsonBytes(), app: "com.example.notes", channel: "stable", now: Date(), source: "r") != .trusted(root))
    }

    @Test func editsKeepEveryThresholdMeetable() throws {
        var draft = RootDraft(
            app: "com.example.notes", channel: "stable", expires: Date().addingTimeInterval(86_400),
            rootKeys: [keys[0].publicKey, keys[1].publicKey], rootThreshold: 2,
            releaseKeys: [keys[2].publicKey], releaseThreshold: 1)
        #expect(throws: ReleaseSigningError.self) { try draft.setThreshold(3, for: .root) }
        #expect(throws: ReleaseSigningError.self) { try draft.removeKey(keys[0].publicKey.keyId, from: .root) }
        try draft.sign(with: keys[0])
        try draft.setThreshold(1, for: .root)
        #expect(draft.signatures.isEmpty, "a change drops the signatures: they covered other bytes")
        try draft.removeKey(keys[0].publicKey.keyId, from: .root)
        #expect(draft.keys[keys[0].publicKey.keyId] == nil, "a key no role names leaves the root")
        let next = RootDraft.successor(of: try draft.root(), expires: Date().addingTimeInterval(172_800))
        #expect(next.version == 2 && next.signatures.isEmpty)
    }

    /// The optional `rollout` role: absent unless given (a root without it is written as
    /// before), kept by successors, and gone with its last key.
    @Test func theRolloutRoleIsOptionalAndLeavesWithItsLastKey() throws {
        #expect(try TrustRoot.parse(JSONPrettyPrinter.render(.object(try validObject())), source: "r").rollout == nil)
        var draft = RootDraft(
            app: "com.example.notes", channel: "stable", expires: Date().addingTimeInterval(86_400),
            rootKeys: [keys[0].publicKey], rootThreshold: 1, releaseKeys: [keys[1].publicKey], releaseThreshold: 1,
            rolloutKeys: [keys[2].publicKey], rolloutThreshold: 1)
        let root = try draft.root()
        #expect(root.rollout == RoleKeys(keyIds: [keys[2].publicKey.keyId], threshold: 1))
        #expect(RootDraft.successor(of: root, expires: Date().addingTimeInterval(172_800)).roles[.rollout] == root.rollout)
        #expect(throws: ReleaseSigningError.self) { try draft.setThreshold(2, for: .rollout) }
        try draft.removeKey(keys[2].publicKey.keyId, from: .rollout)
        let without = try draft.root()
        #expect(without.rollout == nil && without.keys[keys[2].publicKey.keyId] == nil && without.object["roles"]?.objectValue?["rollout"] == nil)
    }
}

import ClientFoundation
import Foundation
import SignedManifest
import StrictJSON

/// A trust root being built or changed offline (`clientctl root …`). Any change of
/// content drops the signatures: they covered other bytes.
public struct RootDraft: Sendable, Equatable {
    public enum Role: String, Sendable, CaseIterable {
        case root, release, rollout
    }

    public var version: Int
    public var app: String
    public var channel: String
    /// The other channels a device of this root may choose to follow (`--choosable`),
    /// sorted; written as the root's `choosable` when not empty. See ``setChoosable(_:)``.
    public private(set) var choosable: [String] = []
    public var expires: Date
    public private(set) var keys: [String: Ed25519.PublicKey]
    public private(set) var roles: [Role: RoleKeys]
    public private(set) var signatures: [DocumentSignature]

    /// Root 1 of a channel.
    public init(
        app: String, channel: String, expires: Date, rootKeys: [Ed25519.PublicKey], rootThreshold: Int,
        releaseKeys: [Ed25519.PublicKey], releaseThreshold: Int, rolloutKeys: [Ed25519.PublicKey] = [], rolloutThreshold: Int = 1
    ) {
        version = 1
        self.app = app
        self.channel = channel
        self.expires = expires
        keys = Dictionary((rootKeys + releaseKeys + rolloutKeys).map { ($0.keyId, $0) }, uniquingKeysWith: { a, _ in a })
        roles = [
            .root: RoleKeys(keyIds: rootKeys.map(\.keyId), threshold: rootThreshold),
            .release: RoleKeys(keyIds: releaseKeys.map(\.keyId), threshold: releaseThreshold),
        ]
        if !rolloutKeys.isEmpty { roles[.rollout] = RoleKeys(keyIds: rolloutKeys.map(\.keyId), threshold: rolloutThreshold) }
        signatures = []
    }

    /// A draft of `root` as it is, signatures kept (to countersign it).
    public init(_ root: TrustRoot) {
        version = root.version
        app = root.app
        channel = root.channel
        choosable = root.choosable
        expires = root.expires ?? Date()
        keys = root.keys
        roles = [.root: root.root, .release: root.release]
        if let rollout = root.rollout { roles[.rollout] = rollout }
        signatures = root.signatures
    }

    /// Root N+1 after `root`: the same keys and roles, unsigned, expiring at `expires`.
    public static func successor(of root: TrustRoot, expires: Date) -> RootDraft {
        var draft = RootDraft(root)
        draft.version = root.version + 1
        draft.expires = expires
        draft.signatures = []
        return draft
    }

    /// Adds `key` to `role` (the threshold stays).
    public mutating func addKey(_ key: Ed25519.PublicKey, to role: Role) {
        keys[key.keyId] = key
        let current = roles[role] ?? RoleKeys(keyIds: [], threshold: 1)
        roles[role] = RoleKeys(keyIds: current.keyIds + [key.keyId], threshold: current.threshold)
        signatures = []
    }

    /// Removes the key `keyId` from `role`; a key no role names any more leaves the root.
    /// Removing the last key of the optional `rollout` role removes the role.
    /// - Throws: ``ReleaseSigningError`` `.invalidArgument` when the role does not list it,
    ///   or when the threshold could no longer be met.
    public mutating func removeKey(_ keyId: String, from role: Role) throws {
        guard let current = roles[role], current.keyIds.contains(keyId) else {
            throw ReleaseSigningError(.invalidArgument, "the \(role.rawValue) role has no key \(keyId)")
        }
        let remaining = current.keyIds.filter { $0 != keyId }
        guard current.threshold <= remaining.count || (role == .rollout && remaining.isEmpty) else {
            throw ReleaseSigningError(
                .invalidArgument,
                "removing \(keyId) leaves \(remaining.count) \(role.rawValue) keys for a threshold of \(current.threshold): add its replacement first, or lower the threshold first"
            )
        }
        roles[role] = role == .rollout && remaining.isEmpty ? nil : RoleKeys(keyIds: remaining, threshold: current.threshold)
        if !roles.values.contains(where: { $0.keyIds.contains(keyId) }) { keys.removeValue(forKey: keyId) }
        signatures = []
    }

    /// Sets the other channels a device of this root may choose to follow (none: only the
    /// root's own channel). Duplicates count once.
    /// - Throws: ``ReleaseSigningError`` `.invalidArgument` for a name off the channel-name
    ///   rule, the root's own channel, or more than ``TrustRoot/maxChoosable`` channels.
    public mutating func setChoosable(_ names: [String]) throws {
        let unique = Array(Set(names)).sorted()
        for name in unique {
            if let problem = ReleaseIdentifier.channel.problem(name) {
                throw ReleaseSigningError(.invalidArgument, "choosable channel '\(name)': \(problem)")
            }
            guard name != channel else {
                throw ReleaseSigningError(
                    .invalidArgument, "choosable channel '\(name)' is the root's own channel, which its devices always follow: name only others")
            }
        }
        guard unique.count <= TrustRoot.maxChoosable else {
            throw ReleaseSigningError(.invalidArgument, "\(unique.count) choosable channels: at most \(TrustRoot.maxChoosable)")
        }
        guard unique != choosable else { return }
        choosable = unique
        signatures = []
    }

    /// Sets how many distinct keys of `role` must sign.
    /// - Throws: ``ReleaseSigningError`` `.invalidArgument` outside 1…(keys of the role).
    public mutating func setThreshold(_ threshold: Int, for role: Role) throws {
        let current = roles[role] ?? RoleKeys(keyIds: [], threshold: 1)
        guard threshold >= 1, threshold <= current.keyIds.count else {
            throw ReleaseSigningError(
                .invalidArgument, "threshold \(threshold) for the \(role.rawValue) role: expected 1 to \(current.keyIds.count) (its keys)")
        }
        roles[role] = RoleKeys(keyIds: current.keyIds, threshold: threshold)
        signatures = []
    }

    /// The root's object without signatures: what every signer signs.
    public var unsignedObject: JSONObject {
        var o = JSONObject()
        o["format"] = .string(TrustRoot.format)
        o["app"] = .string(app)
        o["channel"] = .string(channel)
        if !choosable.isEmpty { o["choosable"] = .array(choosable.map { .string($0) }) }
        o["version"] = .integer(Int64(version))
        o["expires"] = .string(RFC3339.format(expires))
        o["keys"] = .object(JSONObject(keys.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value.pemRepresentation)) }))
        var roleObject = JSONObject()
        for role in Role.allCases where role != .rollout || roles[.rollout] != nil {
            roleObject[role.rawValue] = (roles[role] ?? RoleKeys(keyIds: [], threshold: 1)).jsonValue
        }
        o["roles"] = .object(roleObject)
        return o
    }

    /// Adds `signer`'s signature over the canonical bytes (a key that signed already adds
    /// nothing). Any key may sign: the old root keys of N must sign N+1 too.
    public mutating func sign(with signer: any DocumentSigner) async throws {
        let keyId = signer.publicKey.keyId
        guard !signatures.contains(where: { $0.keyId == keyId }) else { return }
        signatures.append(DocumentSignature(keyId: keyId, signature: try await signer.sign(CanonicalJSON.serialize(unsignedObject))))
    }

    /// ``sign(with:)-(DocumentSigner)`` with a key file, which signs without waiting.
    public mutating func sign(with key: Ed25519.PrivateKey) throws {
        let keyId = key.publicKey.keyId
        guard !signatures.contains(where: { $0.keyId == keyId }) else { return }
        signatures.append(DocumentSignature(keyId: keyId, signature: try key.signature(for: CanonicalJSON.serialize(unsignedObject))))
    }

    /// The root as parsed back from its own bytes, so a draft that devices would refuse
    /// (a threshold no keys can meet, a bad id) never leaves this machine.
    /// - Throws: SignedManifest's `SignedManifestError` `.untrustedRoot` naming what is wrong.
    public func root(source: String = "root") throws -> TrustRoot {
        var o = unsignedObject
        o["signatures"] = .array(signatures.map(\.jsonValue))
        return try TrustRoot.parse(JSONPrettyPrinter.render(.object(o)), source: source)
    }
}

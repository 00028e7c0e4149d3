import ClientFoundation
import Foundation
import StrictJSON

/// A signed trust root, `root/N.json` beside a channel's `manifest.json`: the keys, and
/// for each role (`root`, `release`, optionally `rollout`) the keys that may sign for it and how many must.
///
/// The same idea as TUF's root metadata (TUF specification §4.3), in our formats: strict
/// JSON, RFC 8785 canonical bytes without `signatures` are what is signed, Ed25519 keys as
/// PEM SubjectPublicKeyInfo under their key id. Parsing checks the shape only; whether a
/// root is trusted is `RootChain`'s decision.
public struct TrustRoot: Sendable, Equatable {
    /// The value of `format`.
    public static let format = "clientctl-root-v1"
    /// Largest root file read (TUF §5.3.3 asks for a bound on the root's size).
    public static let maxBytes = 64 * 1024
    /// Most keys one root may list.
    public static let maxKeys = 64
    /// Most channels one root may let its devices choose besides its own.
    public static let maxChoosable = 16

    /// The object as signed (`signatures` included), unknown fields preserved.
    public let object: JSONObject
    /// `N` of `root/N.json`; 0 for the implicit root of `--trust` keys.
    public let version: Int
    /// The application and channel the root is for: a root of another channel is refused.
    public let app: String
    public let channel: String
    /// The other channels of the app a device of this root may choose to follow
    /// (`clientctl channel set`, docs/targeting.md#choosing-a-channel), sorted; empty when
    /// the root lets it follow only ``channel``, as the implicit root does. Manifests of a
    /// chosen channel are verified with this root's `release` role, like its own.
    public let choosable: [String]
    /// Past this time the root is not used (TUF §5.3.10); `nil` only for the implicit root.
    public let expires: Date?
    /// Every key, by key id.
    public let keys: [String: Ed25519.PublicKey]
    /// Who signs roots.
    public let root: RoleKeys
    /// Who signs manifests.
    public let release: RoleKeys
    /// Who may sign restrictions (`restriction.json`: pause, a lower percent, revocations
    /// of the release's rollout, never anything that ships); `nil` when the root has no
    /// such role, as the implicit root never has.
    public let rollout: RoleKeys?
    /// The signatures over ``signedBytes``.
    public let signatures: [DocumentSignature]

    /// The root of a device initialised with `--trust` keys: version 0, every key in both
    /// roles, threshold 1 — exactly the trust such a device always had.
    public static func implicit(trusting trusted: [Ed25519.PublicKey], app: String, channel: String) -> TrustRoot {
        let ids = trusted.map(\.keyId)
        let role = RoleKeys(keyIds: ids, threshold: 1)
        return TrustRoot(
            object: JSONObject(), version: 0, app: app, channel: channel, choosable: [], expires: nil,
            keys: Dictionary(trusted.map { ($0.keyId, $0) }, uniquingKeysWith: { a, _ in a }), root: role, release: role,
            rollout: nil, signatures: [])
    }

    init(
        object: JSONObject, version: Int, app: String, channel: String, choosable: [String], expires: Date?,
        keys: [String: Ed25519.PublicKey], root: RoleKeys, release: RoleKeys, rollout: RoleKeys?, signatures: [DocumentSignature]
    ) {
        self.object = object
        self.version = version
        self.app = app
        self.channel = channel
        self.choosable = choosable
        self.expires = expires
        self.keys = keys
        self.root = root
        self.release = release
        self.rollout = rollout
        self.signatures = signatures
    }

    /// True for the implicit root of `--trust` keys.
    public var isImplicit: Bool { version == 0 }

    /// Every channel a device of this root may follow: its own ``channel`` and the
    /// ``choosable`` ones, sorted.
    public var channels: [String] { ([channel] + choosable).sorted() }

    /// True when a device of this root may follow `name`: the root's own channel, or one
    /// it lists as ``choosable``.
    public func allowsChannel(_ name: String) -> Bool { name == channel || choosable.contains(name) }

    /// The bytes the signatures cover: RFC 8785 of the object without `signatures`.
    public var signedBytes: [UInt8] { Self.signedBytes(of: object) }

    static func signedBytes(of object: JSONObject) -> [UInt8] {
        var unsigned = object
        unsigned.removeValue(forKey: "signatures")
        return CanonicalJSON.serialize(unsigned)
    }

    /// True when the root is past its `expires` at `now`.
    public func isExpired(at now: Date) -> Bool { expires.map { now >= $0 } ?? false }

    /// The distinct keys of this root's `root` role that signed it.
    public var selfSigners: [String] { Threshold.validSigners(signatures, message: signedBytes, role: root, keys: keys) }

    /// The root as a file: indented JSON with a newline at the end.
    public func jsonBytes() -> [UInt8] { JSONPrettyPrinter.render(.object(object)) }

    /// Parses a root file strictly (``maxBytes``) and checks its shape: format, version,
    /// app and channel, the channels it lets devices choose (`choosable`, when present),
    /// expiry, every key under its own key id, the roles `root` and
    /// `release` (and `rollout` when present) with thresholds their keys can meet, and well-formed signatures. It checks no signature.
    /// - Throws: ``SignedManifestError`` `.untrustedRoot` naming `source` and the field.
    public static func parse<Bytes: Collection>(_ bytes: Bytes, source: String) throws -> TrustRoot where Bytes.Element == UInt8 {
        func refuse(_ why: String) -> SignedManifestError { SignedManifestError(.untrustedRoot, "\(source): \(why)") }
        guard bytes.count <= maxBytes else { throw refuse("larger than \(maxBytes) bytes") }
        let o: JSONObject
        do {
            o = try StrictJSON.parseObject(bytes, limits: .init(maxBytes: maxBytes, maxDepth: 8), source: source)
        } catch let error as StrictJSONError {
            throw SignedManifestError(.untrustedRoot, error.message, underlying: error)
        }
        do {
            return try TrustRoot(validating: o)
        } catch let rejection as ManifestRejection {
            throw refuse(rejection.message)
        }
    }

    private init(validating o: JSONObject) throws {
        let fields = ManifestFieldReader(object: o)
        let format = try fields.string("format")
        guard format == Self.format else { throw fields.invalid("format", "is \(Quoting.quoted(format)), expected \"\(Self.format)\"") }
        let number = try fields.size("version")
        guard (1...1_000_000).contains(number) else { throw fields.invalid("version", "is \(number): expected 1 to 1000000") }
        version = Int(number)
        app = try fields.identifier(.app)
        channel = try fields.identifier(.channel)
        choosable = try Self.choosable(in: fields, own: channel)
        expires = try fields.date("expires")
        guard case .object(let keyObject) = try fields.value("keys") else {
            throw ManifestRejection(.wrongType, field: "keys", "field 'keys' must be an object of key id → PEM public key")
        }
        guard (1...Self.maxKeys).contains(keyObject.count) else {
            throw fields.invalid("keys", "lists \(keyObject.count) keys: expected 1 to \(Self.maxKeys)")
        }
        var keys: [String: Ed25519.PublicKey] = [:]
        for member in keyObject {
            guard case .string(let pem) = member.value,
                let key = try? Ed25519.PublicKey(pem: pem, source: "key \(member.key)")
            else { throw fields.invalid("keys", "entry \(Quoting.quoted(member.key)) is not a PEM Ed25519 public key") }
            guard key.keyId == member.key else {
                throw fields.invalid("keys", "entry \(Quoting.quoted(member.key)) holds the key \(key.keyId): a key is listed under its own id")
            }
            keys[member.key] = key
        }
        self.keys = keys
        guard case .object(let roles) = try fields.value("roles") else {
            throw ManifestRejection(.wrongType, field: "roles", "field 'roles' must be an object with 'root', 'release' and optionally 'rollout'")
        }
        func role(_ name: String) throws -> RoleKeys {
            guard case .object(let r)? = roles[name] else {
                throw ManifestRejection(.missingField, field: "roles", "field 'roles' has no '\(name)' object")
            }
            guard case .array(let ids)? = r["keyIds"], case .integer(let threshold)? = r["threshold"] else {
                throw ManifestRejection(.wrongType, field: "roles", "role '\(name)' needs 'keyIds' (array) and 'threshold' (integer)")
            }
            let keyIds = try ids.map { id -> String in
                guard case .string(let s) = id, keys[s] != nil else {
                    throw ManifestRejection(.invalidValue, field: "roles", "role '\(name)' names a key that 'keys' does not list: \(id)")
                }
                return s
            }
            let roleKeys = RoleKeys(keyIds: keyIds, threshold: Int(clamping: threshold))
            guard threshold >= 1, threshold <= roleKeys.keyIds.count else {
                throw ManifestRejection(
                    .invalidValue, field: "roles",
                    "role '\(name)' has threshold \(threshold) with \(roleKeys.keyIds.count) distinct keys: expected 1 to \(roleKeys.keyIds.count)")
            }
            return roleKeys
        }
        root = try role("root")
        release = try role("release")
        rollout = roles["rollout"] == nil ? nil : try role("rollout")
        if let unknown = roles.keys.first(where: { !["root", "release", "rollout"].contains($0) }) {
            throw ManifestRejection(.invalidValue, field: "roles", "role '\(unknown)' is not root, release or rollout")
        }
        signatures = try DocumentSignature.readList(of: o)
        object = o
    }

    /// `choosable`: an array of 1 to ``maxChoosable`` channel names, each once, none of
    /// them the root's own; absent: none.
    private static func choosable(in fields: ManifestFieldReader, own: String) throws -> [String] {
        guard let value = fields.object["choosable"] else { return [] }
        guard case .array(let items) = value else {
            throw ManifestRejection(.wrongType, field: "choosable", "field 'choosable' must be an array of channel names")
        }
        guard (1...maxChoosable).contains(items.count) else {
            throw fields.invalid("choosable", "lists \(items.count) channels: expected 1 to \(maxChoosable)")
        }
        var names: [String] = []
        for item in items {
            guard case .string(let name) = item else {
                throw ManifestRejection(.wrongType, field: "choosable", "field 'choosable' must be an array of channel names")
            }
            if let problem = ReleaseIdentifier.channel.problem(name) {
                throw fields.invalid("choosable", "entry \(Quoting.quoted(name)): \(problem)")
            }
            guard name != own else {
                throw fields.invalid("choosable", "lists the root's own channel \(Quoting.quoted(name)): list only the others")
            }
            guard !names.contains(name) else { throw fields.invalid("choosable", "lists \(Quoting.quoted(name)) twice") }
            names.append(name)
        }
        return names.sorted()
    }
}

import ApplyPolicy
import ClientFoundation
import DeviceTargeting
import Foundation
import SignedManifest
import StrictJSON

/// A manifest before signing: what `publish` fills in.
public struct ManifestDraft: Sendable, Equatable {
    public var app: String
    public var channel: String
    public var version: Version
    public var url: String
    public var sha256: String
    public var size: Int64
    public var minShellVersion: Version
    public var maxShellVersion: Version?
    public var published: Date
    public var expires: Date?
    /// A staged rollout (`nil`: every device takes the release at once).
    public var rollout: Rollout?
    /// Versions devices must leave.
    public var revoked: [Version] = []
    /// Which devices the release is for (`nil`: every device of the channel).
    public var target: TargetExpression?
    /// Older releases offered beside this one to the devices it is not for.
    public var alongside: [AlongsideRelease] = []
    /// Devices held at most on an older release, in order.
    public var pins: [ReleasePin] = []
    /// The cohort files the targets ask about (docs/targeting.md#cohorts).
    public var cohorts: [CohortReference] = []
    /// The release's tree tar and patches from older releases (`nil`: none).
    package var delta: ReleaseDelta?
    /// When devices switch to the release once staged (`nil`: no `apply`, i.e. `next-start`).
    package var apply: ApplyPolicy?
    /// Extra fields to sign along (must not use the names of the fields in docs/formats.md#manifest).
    public var extraFields: JSONObject

    public init(
        app: String, channel: String, version: Version, url: String, sha256: String, size: Int64,
        minShellVersion: Version, maxShellVersion: Version? = nil, published: Date = Date(),
        expires: Date? = nil, extraFields: JSONObject = JSONObject()
    ) {
        self.app = app
        self.channel = channel
        self.version = version
        self.url = url
        self.sha256 = sha256
        self.size = size
        self.minShellVersion = minShellVersion
        self.maxShellVersion = maxShellVersion
        self.published = published
        self.expires = expires
        self.extraFields = extraFields
    }

    /// The unsigned object, with `keyId` of the signer, fields in publishing order.
    public func unsignedObject(keyId: String) -> JSONObject {
        var o = JSONObject()
        o["format"] = .string(Manifest.format)
        o["app"] = .string(app)
        o["channel"] = .string(channel)
        o["version"] = .string(version.description)
        o["url"] = .string(url)
        o["sha256"] = .string(sha256)
        o["size"] = .integer(size)
        o["minShellVersion"] = .string(minShellVersion.description)
        if let maxShellVersion { o["maxShellVersion"] = .string(maxShellVersion.description) }
        o["published"] = .string(RFC3339.format(published))
        if let expires { o["expires"] = .string(RFC3339.format(expires)) }
        if let rollout { o["rollout"] = rollout.jsonValue }
        if !revoked.isEmpty { o["revoked"] = .array(revoked.map { .string($0.description) }) }
        if let target { o["target"] = .string(target.description) }
        if !alongside.isEmpty { o["alongside"] = .array(alongside.map(\.jsonValue)) }
        if !pins.isEmpty { o["pins"] = .array(pins.map(\.jsonValue)) }
        if !cohorts.isEmpty { o["cohorts"] = .array(cohorts.map(\.jsonValue)) }
        if let delta { o["delta"] = delta.json }
        if let apply { o["apply"] = apply.jsonValue }
        for m in extraFields where !Manifest.knownFields.contains(m.key) { o[m.key] = m.value }
        o["keyId"] = .string(keyId)
        return o
    }

    /// Signs the draft with one key: canonical bytes of the unsigned object, Ed25519,
    /// `signature` added (the single-signature form every device reads).
    public func signed(with key: Ed25519.PrivateKey) throws -> Manifest {
        var o = unsignedObject(keyId: "")
        o.removeValue(forKey: "keyId")
        return try Manifest.sign(o, by: [key])
    }

    /// Signs the draft with every signer over the same canonical bytes: the first as the
    /// `keyId`/`signature` pair, the others in `signatures`. The result is validated like
    /// any received manifest, so publish never writes a manifest that devices would reject.
    public func signed(by signers: [any DocumentSigner]) async throws -> Manifest {
        var o = unsignedObject(keyId: "")
        o.removeValue(forKey: "keyId")
        return try await Manifest.sign(o, by: signers)
    }
}

extension Manifest {
    /// Signs `unsigned` (a manifest object without `keyId`, `signature` and `signatures`)
    /// with every signer over the same canonical bytes: the first as the `keyId`/`signature`
    /// pair, the others in `signatures`; validated like any received manifest.
    public static func sign(_ unsigned: JSONObject, by signers: [any DocumentSigner]) async throws -> Manifest {
        guard let first = signers.first else { throw ReleaseSigningError(.invalidArgument, "a manifest needs at least one signing key") }
        let (o, message) = prepare(unsigned, firstKeyId: first.publicKey.keyId)
        var signatures: [DocumentSignature] = []
        for signer in distinct(signers) {
            signatures.append(DocumentSignature(keyId: signer.publicKey.keyId, signature: try await signer.sign(message)))
        }
        return try assemble(o, signatures: signatures, keys: signers.map(\.publicKey))
    }

    /// ``sign(_:by:)-(_,[DocumentSigner])`` with key files, which sign without waiting.
    public static func sign(_ unsigned: JSONObject, by keys: [Ed25519.PrivateKey]) throws -> Manifest {
        guard let first = keys.first else { throw ReleaseSigningError(.invalidArgument, "a manifest needs at least one signing key") }
        let (o, message) = prepare(unsigned, firstKeyId: first.publicKey.keyId)
        let signatures = try distinct(keys).map { DocumentSignature(keyId: $0.publicKey.keyId, signature: try $0.signature(for: message)) }
        return try assemble(o, signatures: signatures, keys: keys.map(\.publicKey))
    }

    /// `unsigned` with `keyId` set to the first signer, and the canonical bytes to sign.
    private static func prepare(_ unsigned: JSONObject, firstKeyId: String) -> (JSONObject, [UInt8]) {
        var o = unsigned
        for name in ["keyId", "signature", "signatures"] { o.removeValue(forKey: name) }
        o["keyId"] = .string(firstKeyId)
        return (o, CanonicalJSON.serialize(o))
    }

    /// Signers with distinct keys, in the order given.
    private static func distinct<Signer: DocumentSigner>(_ signers: [Signer]) -> [Signer] {
        var seen: Set<String> = []
        return signers.filter { seen.insert($0.publicKey.keyId).inserted }
    }

    private static func distinct(_ signers: [any DocumentSigner]) -> [any DocumentSigner] {
        var seen: Set<String> = []
        return signers.filter { seen.insert($0.publicKey.keyId).inserted }
    }

    /// The first signature as the `keyId`/`signature` pair, the others in `signatures`,
    /// validated like any received manifest.
    private static func assemble(_ prepared: JSONObject, signatures: [DocumentSignature], keys: [Ed25519.PublicKey]) throws -> Manifest {
        var o = prepared
        guard let first = signatures.first else { throw ReleaseSigningError(.invalidArgument, "a manifest needs at least one signing key") }
        o["signature"] = .string(Data(first.signature).base64EncodedString())
        if signatures.count > 1 { o["signatures"] = .array(signatures.dropFirst().map(\.jsonValue)) }
        switch ManifestVerifier(trustedKeys: keys).verify(o) {
        case .valid(let manifest): return manifest
        case .invalid(let rejection):
            throw ReleaseSigningError(.invalidManifest, "cannot publish: \(rejection.message)", underlying: rejection)
        }
    }

    /// The manifest with one more signature (`clientctl sign`): the signer signs the same
    /// canonical bytes, and its entry joins `signatures`. A key that signed already adds
    /// nothing.
    public func addingSignature(by signer: any DocumentSigner) async throws -> Manifest {
        let keyId = signer.publicKey.keyId
        guard !signatures.contains(where: { $0.keyId == keyId }) else { return self }
        var o = object
        let entry = DocumentSignature(keyId: keyId, signature: try await signer.sign(signedBytes))
        o["signatures"] = .array((o["signatures"]?.arrayValue ?? []) + [entry.jsonValue])
        switch ManifestVerifier(trustedKeys: [signer.publicKey]).verify(o) {
        case .valid(let manifest): return manifest
        case .invalid(let rejection):
            throw ReleaseSigningError(.invalidManifest, "cannot add the signature: \(rejection.message)", underlying: rejection)
        }
    }
}

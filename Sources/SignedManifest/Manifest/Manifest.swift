import ApplyPolicy
import ClientFoundation
import DeviceTargeting
import Foundation
import StrictJSON

/// A verified `signed-client-v1` manifest (docs/formats.md#manifest).
///
/// Only ``ManifestVerifier`` (after the signature verified) and `ManifestDraft.signed(with:)` (ReleaseSigning)
/// make one, so holding a `Manifest` means its fields passed validation. ``object`` is the
/// complete JSON object as signed, unknown fields included; the typed properties are read
/// from it.
public struct Manifest: Sendable, Equatable {
    /// The value of `format` this version reads.
    public static let format = "signed-client-v1"

    /// The complete signed object, `signature` included, unknown fields preserved.
    public let object: JSONObject
    /// Application id, e.g. `com.example.notes`.
    public let app: String
    /// Release channel, e.g. `stable`.
    public let channel: String
    /// The client version.
    public let version: Version
    /// Archive location: relative to the manifest's URL, or absolute.
    public let url: String
    /// Lowercase hex SHA-256 of the archive bytes.
    public let sha256: String
    /// Archive length in bytes.
    public let size: Int64
    /// Lowest shell version that may run this client.
    public let minShellVersion: Version
    /// Highest shell version that may run this client, inclusive.
    public let maxShellVersion: Version?
    /// When the release was published (signed last: every re-signing moves it).
    public let published: Date
    /// When this version was first published, carried by every re-signing of it (`rollout
    /// set`, `revoke`, …); nil in a first publication, whose `published` it is.
    public let firstPublished: Date?
    /// When this version was first published: ``firstPublished``, else ``published``.
    public var firstPublication: Date { firstPublished ?? published }
    /// Past this time a device keeps what it has and reports a stale feed.
    public let expires: Date?
    /// A staged rollout: which share of devices takes this release now (`nil`: all).
    public let rollout: Rollout?
    /// Versions devices must leave and never select again (at most 1,000).
    public let revoked: [Version]
    /// Which devices the release is for (docs/targeting.md): each device evaluates it on
    /// its own labels and id; a device it does not admit never takes the release. `nil`:
    /// every device of the channel.
    public let target: TargetExpression?
    /// Older releases the channel offers beside this one, to the devices this one is not
    /// for (docs/targeting.md#two-releases-at-once), newest first; empty: none.
    public let alongside: [AlongsideRelease]
    /// Devices held at most on an older release (docs/targeting.md#pins), in order: the
    /// first whose target admits a device holds; empty: none.
    public let pins: [ReleasePin]
    /// The cohort files the targets of this release and of its pins (and the rollout role's
    /// restriction of it) may ask about, by name (docs/targeting.md#cohorts); empty: none.
    public let cohorts: [CohortReference]
    /// When a device that staged this release switches to it (docs/apply-policies.md);
    /// `nil` when the manifest carries no `apply` (then `next-start`, the rule before apply
    /// policies). Signed like every other field.
    package let apply: ApplyPolicy?
    /// Id of the first signing key (first 16 hex of SHA-256 over its DER SubjectPublicKeyInfo).
    public let keyId: String
    /// The first Ed25519 signature's bytes (64).
    public let signature: [UInt8]
    /// Every signature: the single `keyId`/`signature` pair (when present) first, then the
    /// entries of `signatures` (several release keys, a threshold of which a root asks for).
    public let signatures: [DocumentSignature]

    /// The names of every field of docs/formats.md#manifest (everything else is an unknown field).
    public static let knownFields: Set<String> = [
        "format", "app", "channel", "version", "url", "sha256", "size", "minShellVersion",
        "maxShellVersion", "published", "firstPublished", "expires", "keyId", "signature", "signatures", "rollout", "revoked", "delta", "apply",
        "target", "alongside", "pins", "cohorts",
    ]

    /// Fields this version does not know: signed like every other field, otherwise ignored.
    public var unknownFields: JSONObject {
        JSONObject(object.members.filter { !Self.knownFields.contains($0.key) }.map { ($0.key, $0.value) })
    }

    /// The exact bytes every signature covers (RFC 8785 of ``object`` without `signature`
    /// and `signatures`).
    public var signedBytes: [UInt8] { Self.signedBytes(of: object) }

    /// The bytes a signature over `object` covers: the RFC 8785 canonical JSON of the object
    /// with its `signature` and `signatures` members removed. A manifest with one signature
    /// has no `signatures`, so its bytes are what they always were.
    public static func signedBytes(of object: JSONObject) -> [UInt8] {
        var unsigned = object
        unsigned.removeValue(forKey: "signature")
        unsigned.removeValue(forKey: "signatures")
        return CanonicalJSON.serialize(unsigned)
    }

    /// Every signature of `object`, read without verifying any: the `keyId`/`signature`
    /// pair unless the object carries only `signatures`, then the `signatures` entries.
    /// - Throws: ``ManifestRejection`` naming the malformed field.
    static func readSignatures(of object: JSONObject) throws -> [DocumentSignature] {
        let fields = ManifestFieldReader(object: object)
        let list = try DocumentSignature.readList(of: object)
        let onlyList = object["signatures"] != nil && object["keyId"] == nil && object["signature"] == nil
        guard !onlyList else {
            guard !list.isEmpty else { throw ManifestRejection(.invalidValue, field: "signatures", "field 'signatures' is empty") }
            return list
        }
        return [DocumentSignature(keyId: try fields.keyId("keyId"), signature: try fields.signature("signature"))] + list
    }

    /// The manifest as a file: indented JSON, fields in publishing order, newline at the end.
    public func jsonBytes() -> [UInt8] { JSONPrettyPrinter.render(.object(object)) }

    /// True when a shell of `shell` may run this client (`min ≤ shell ≤ max`).
    public func isCompatible(withShell shell: Version) -> Bool {
        if shell < minShellVersion { return false }
        if let max = maxShellVersion, max < shell { return false }
        return true
    }

    /// The archive file name publish uses for this release, e.g. `v1.5.1.tar.gz`.
    public static func archiveName(version: Version, format: ArchiveFormat) -> String {
        "v\(version).\(format.fileExtension)"
    }

    /// Reads the typed fields of `object`, checking each against docs/formats.md#manifest. Does not check
    /// the signature: ``ManifestVerifier`` does that first, then calls this.
    package static func validate(_ object: JSONObject) -> Result<Manifest, ManifestRejection> {
        do {
            return .success(try Manifest(validating: object))
        } catch let rejection as ManifestRejection {
            return .failure(rejection)
        } catch {
            return .failure(ManifestRejection(.invalidValue, field: nil, "\(error)"))
        }
    }

    private init(validating o: JSONObject) throws {
        let fields = ManifestFieldReader(object: o)
        let format = try fields.string("format")
        guard format == Self.format else {
            throw ManifestRejection(.unsupportedFormat, field: "format", "format is \"\(format)\", expected \"\(Self.format)\"")
        }
        app = try fields.identifier(.app)
        channel = try fields.identifier(.channel)
        version = try fields.version("version")
        url = try fields.url("url")
        sha256 = try fields.sha256("sha256")
        size = try fields.size("size")
        minShellVersion = try fields.version("minShellVersion")
        maxShellVersion = try fields.optional("maxShellVersion") { try fields.version($0) }
        if let max = maxShellVersion, max < minShellVersion {
            throw ManifestRejection(
                .invalidValue, field: "maxShellVersion",
                "maxShellVersion \(max) is below minShellVersion \(minShellVersion)")
        }
        published = try fields.date("published")
        firstPublished = try fields.optional("firstPublished") { try fields.date($0) }
        if let firstPublished, firstPublished > published {
            throw ManifestRejection(.invalidValue, field: "firstPublished", "firstPublished is after published")
        }
        expires = try fields.optional("expires") { try fields.date($0) }
        if let expires, expires <= published {
            throw ManifestRejection(.invalidValue, field: "expires", "expires is not after published")
        }
        rollout = try fields.optional("rollout") { try Rollout.parse(try fields.value($0)) }
        revoked =
            try fields.optional("revoked") { name -> [Version] in
                guard case .array(let entries) = try fields.value(name) else {
                    throw ManifestRejection(.wrongType, field: name, "field 'revoked' must be an array of versions")
                }
                guard entries.count <= 1_000 else { throw fields.invalid(name, "lists \(entries.count) versions, at most 1000") }
                return try entries.map { entry in
                    guard case .string(let text) = entry, let v = Version(text) else {
                        throw fields.invalid(name, "holds \(entry.stringValue.map(Quoting.quoted) ?? entry.typeName): not a SemVer 2.0 version")
                    }
                    return v
                }
            } ?? []
        if revoked.contains(version) { throw fields.invalid("revoked", "revokes the release it describes (\(version))") }
        target = try fields.optional("target") { try fields.target($0) }
        let own = version
        alongside = (try fields.optional("alongside") { try fields.alongside($0, own: own) } ?? []).sorted { $1.version < $0.version }
        pins = try fields.optional("pins") { try fields.pins($0, own: own) } ?? []
        cohorts = try fields.optional("cohorts") { try fields.cohorts($0) } ?? []
        // Every cohort a target asks about is named, so a device knows which file to read.
        for (field, expression) in [("target", target)] + pins.map({ ("pins", Optional($0.target)) }) {
            for name in expression?.cohorts ?? [] where !cohorts.contains(where: { $0.name == name }) {
                throw fields.invalid(field, "asks about the cohort '\(name)', which 'cohorts' does not name")
            }
        }
        // A deadline is not compared with `published`: a release re-signed after its
        // deadline (`rollout pause`) keeps it, and a device past it switches at once.
        apply = try fields.optional("apply") { try ApplyPolicy.read(try fields.value($0), field: $0) }
        signatures = try Self.readSignatures(of: o)
        keyId = signatures[0].keyId
        signature = signatures[0].signature
        object = o
    }
}

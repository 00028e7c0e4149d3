import ApplyPolicy
import ClientFoundation
import DeviceTargeting
import Foundation
import StrictJSON

/// A restriction of a channel's current release, `restriction.json` beside its
/// `manifest.json`, signed by the trust root's `rollout` role: a key that can only make
/// the fleet take less. It can pause the release's rollout, cap its percent, and revoke
/// versions up to the release's own; it carries no URL, no file, no version to take and
/// no floor, so it cannot ship anything (docs/formats.md#restrictions).
///
/// It is bound to one signed manifest by the SHA-256 of that manifest's signed bytes
/// (``digest(of:)``): any re-signed manifest — a release-role edit — supersedes it.
public struct Restriction: Sendable, Equatable {
    /// The value of `format`.
    public static let format = "clientctl-restriction-v1"
    /// Largest restriction file read.
    public static let maxBytes = 64 * 1024
    /// Longest time from `issued` to `expires` for the release of a manifest that has no
    /// `expires` of its own: a stolen rollout key holds a fleet back at most this long
    /// per signature.
    public static let maxLifetime: TimeInterval = 31 * 86_400
    /// Most versions `revoked` may list (as a manifest's).
    public static let maxRevoked = 1_000
    /// The members a restriction may have; any other is refused.
    public static let knownFields: Set<String> = [
        "format", "app", "channel", "manifest", "issued", "expires", "rollout", "revoked", "apply", "target", "signatures",
    ]

    /// The object as signed (`signatures` included).
    public let object: JSONObject
    /// The application and channel of the release restricted.
    public let app: String
    public let channel: String
    /// The version of the release restricted (`manifest.version`).
    public let version: Version
    /// SHA-256 (lowercase hex) of the restricted manifest's signed bytes (`manifest.sha256`).
    public let manifestDigest: String
    /// When it was signed; before this time it does not hold yet.
    public let issued: Date
    /// From this time on it no longer holds: the manifest's own rules apply again.
    public let expires: Date
    /// The highest percent of devices that may take the release (`rollout.percent`).
    public let percent: Double?
    /// No device takes the release while the restriction holds (`rollout.paused`).
    public let paused: Bool
    /// Versions devices must leave and never select again (the release's own allowed).
    public let revoked: [Version]
    /// A more patient apply policy for the release (docs/apply-policies.md): it may make
    /// devices wait longer, never hurry them (``ApplyPolicy/restricted(by:)``).
    package let apply: ApplyPolicy?
    /// A narrower target (docs/targeting.md): a device takes the release only when both
    /// this and the manifest's own `target` admit it, so it can narrow the devices a
    /// release is for, never widen them.
    public let target: TargetExpression?
    /// The signatures over ``signedBytes``.
    public let signatures: [DocumentSignature]

    /// SHA-256 (lowercase hex) of `manifest`'s signed bytes: the RFC 8785 form without its
    /// signatures, so whitespace, member order and added countersignatures do not matter,
    /// and any re-signed edit (a later `published`) gives another digest.
    public static func digest(of manifest: Manifest) -> String { manifest.signedDigest }

    /// The bytes the signatures cover: RFC 8785 of the object without `signatures`.
    public var signedBytes: [UInt8] { Self.signedBytes(of: object) }

    static func signedBytes(of object: JSONObject) -> [UInt8] {
        var unsigned = object
        unsigned.removeValue(forKey: "signatures")
        return CanonicalJSON.serialize(unsigned)
    }

    /// True when `manifest` is the one it restricts.
    public func restricts(_ manifest: Manifest) -> Bool { manifestDigest == Self.digest(of: manifest) }

    /// The restriction as a file: indented JSON with a newline at the end.
    public func jsonBytes() -> [UInt8] { JSONPrettyPrinter.render(.object(object)) }

    /// Parses a restriction strictly (``maxBytes``, depth 8, unknown members refused) and
    /// checks its shape. It checks no signature and compares nothing with a manifest.
    /// - Throws: ``SignedManifestError`` `.restrictionRefused` naming `source` and the field.
    public static func parse<Bytes: Collection>(_ bytes: Bytes, source: String) throws -> Restriction where Bytes.Element == UInt8 {
        func refuse(_ why: String) -> SignedManifestError { SignedManifestError(.restrictionRefused, "\(source): \(why)") }
        guard bytes.count <= maxBytes else { throw refuse("larger than \(maxBytes) bytes") }
        let o: JSONObject
        do {
            o = try StrictJSON.parseObject(bytes, limits: .init(maxBytes: maxBytes, maxDepth: 8), source: source)
        } catch let error as StrictJSONError {
            throw SignedManifestError(.restrictionRefused, error.message, underlying: error)
        }
        do {
            return try Restriction(validating: o)
        } catch let rejection as ManifestRejection {
            throw refuse(rejection.message)
        }
    }

    private init(validating o: JSONObject) throws {
        let fields = ManifestFieldReader(object: o)
        if let unknown = o.keys.first(where: { !Self.knownFields.contains($0) }) {
            throw fields.invalid(unknown, "is not a member of a restriction: a restriction carries nothing else")
        }
        let format = try fields.string("format")
        guard format == Self.format else { throw fields.invalid("format", "is \(Quoting.quoted(format)), expected \"\(Self.format)\"") }
        app = try fields.identifier(.app)
        channel = try fields.identifier(.channel)
        guard case .object(let bound) = try fields.value("manifest") else {
            throw ManifestRejection(.wrongType, field: "manifest", "field 'manifest' must be an object {\"version\", \"sha256\"}")
        }
        if let unknown = bound.keys.first(where: { $0 != "version" && $0 != "sha256" }) {
            throw fields.invalid("manifest", "has an unknown member '\(unknown)'")
        }
        let manifestFields = ManifestFieldReader(object: bound)
        version = try manifestFields.version("version")
        manifestDigest = try manifestFields.sha256("sha256")
        issued = try fields.date("issued")
        expires = try fields.date("expires")
        guard expires > issued else { throw fields.invalid("expires", "is not after 'issued'") }
        var percent: Double?
        var paused = false
        if let value = o["rollout"] {
            guard case .object(let r) = value else {
                throw ManifestRejection(.wrongType, field: "rollout", "field 'rollout' must be an object {\"percent\": p, \"paused\": true}")
            }
            if let unknown = r.keys.first(where: { $0 != "percent" && $0 != "paused" }) {
                throw fields.invalid("rollout", "has the member '\(unknown)': a restriction's rollout has only 'percent' and 'paused'")
            }
            switch r["percent"] {
            case nil: break
            case .integer(let n)?: percent = Double(n)
            case .double(let d)?: percent = d
            case let other?: throw fields.invalid("rollout", "member 'percent' must be a number, got \(other.typeName)")
            }
            if let p = percent, !(p.isFinite && (0...100).contains(p)) {
                throw fields.invalid("rollout", "percent \(p) is not between 0 and 100")
            }
            switch r["paused"] {
            case nil: break
            case .bool(true)?: paused = true
            default: throw fields.invalid("rollout", "member 'paused' may only be true")
            }
            guard percent != nil || paused else { throw fields.invalid("rollout", "needs 'percent' or 'paused'") }
        }
        self.percent = percent
        self.paused = paused
        var revoked: [Version] = []
        if let value = o["revoked"] {
            guard case .array(let entries) = value else {
                throw ManifestRejection(.wrongType, field: "revoked", "field 'revoked' must be an array of versions")
            }
            guard entries.count <= Self.maxRevoked else {
                throw fields.invalid("revoked", "lists \(entries.count) versions: at most \(Self.maxRevoked)")
            }
            for entry in entries {
                guard case .string(let text) = entry, let v = Version(text) else {
                    throw fields.invalid("revoked", "holds \(entry): not a SemVer 2.0 version (no 'v' prefix)")
                }
                revoked.append(v)
            }
        }
        self.revoked = revoked
        apply = try fields.optional("apply") { try ApplyPolicy.read(try fields.value($0), field: $0) }
        target = try fields.optional("target") { try fields.target($0) }
        guard percent != nil || paused || !revoked.isEmpty || apply != nil || target != nil else {
            throw fields.invalid("rollout", "'revoked', 'apply' and 'target' are all absent: the restriction restricts nothing")
        }
        signatures = try DocumentSignature.readList(of: o)
        guard !signatures.isEmpty else { throw ManifestRejection(.missingField, field: "signatures", "field 'signatures' is missing or empty") }
        object = o
    }
}

/// What a device makes of a restriction for the manifest it verified.
public enum RestrictionVerdict: Sendable, Equatable {
    /// It holds now: apply it (``Restriction/percent``, ``Restriction/paused``, ``Restriction/revoked``).
    case inForce(Restriction)
    /// It does not apply, and why (bound to another manifest, expired, not issued yet):
    /// the manifest's own rules hold.
    case ignored(String)
}

extension Restriction {
    /// Checks `bytes` (`restriction.json`) against the verified `manifest` and the
    /// device's trust `root`, in this order:
    /// 1. shape (``parse(_:source:)``);
    /// 2. bound to another manifest → ignored (a newer release-role edit superseded it;
    ///    nothing but "ignore" depends on this unsigned reading, which an attacker who
    ///    can answer 404 obtains anyway);
    /// 3. a threshold of the root's `rollout` keys signed it (only those keys count);
    /// 4. it asks for nothing the manifest did not sign: the same app, channel and version,
    ///    a percent not above the manifest's highest, `expires` not after the manifest's
    ///    (at most ``maxLifetime`` after `issued` when the manifest has none), no revoked
    ///    version above the release's own;
    /// 5. not issued yet, or expired at `now` → ignored.
    ///
    /// A root without a `rollout` role (the implicit root of `--trust` keys among them)
    /// ignores every restriction.
    /// - Throws: ``SignedManifestError`` `.restrictionRefused` for anything refused in 1, 3 or 4.
    public static func check<Bytes: Collection>(
        _ bytes: Bytes, for manifest: Manifest, root: TrustRoot, now: Date, source: String
    ) throws -> RestrictionVerdict where Bytes.Element == UInt8 {
        guard let role = root.rollout else {
            return .ignored("trust root \(root.version) has no rollout role: restrictions are ignored")
        }
        let r = try parse(bytes, source: source)
        func refuse(_ why: String) -> SignedManifestError { SignedManifestError(.restrictionRefused, "\(source): \(why)") }
        guard r.restricts(manifest) else {
            return .ignored("the restriction is for another manifest of release \(r.version) (superseded by a newer release-role edit)")
        }
        let signers = Threshold.validSigners(r.signatures, message: r.signedBytes, role: role, keys: root.keys)
        guard signers.count >= role.threshold else {
            let named = r.signatures.map(\.keyId)
            let others = named.filter { !role.keyIds.contains($0) }
            let note = others.isEmpty ? "" : " (\(others.joined(separator: ", ")) \(others.count == 1 ? "is" : "are") not a rollout key)"
            throw refuse(
                "signed by \(signers.count) of trust root \(root.version)'s rollout keys, \(role.threshold) needed\(note): "
                    + "only the rollout role may restrict a release")
        }
        try r.requireWithin(manifest, refuse: refuse)
        if r.issued > now { return .ignored("the restriction is issued at \(RFC3339.format(r.issued)), later than now: it does not hold yet") }
        if r.expires <= now {
            return .ignored("the restriction of release \(r.version) expired at \(RFC3339.format(r.expires)): the manifest's own rules hold again")
        }
        return .inForce(r)
    }

    /// Refuses anything `manifest` did not sign (step 4 of ``check(_:for:root:now:source:)``).
    package func requireWithin<Refusal: Error>(_ manifest: Manifest, refuse: (String) -> Refusal) throws {
        guard app == manifest.app, channel == manifest.channel, version == manifest.version else {
            throw refuse("restricts \(app) \(channel) \(version), but the manifest is \(manifest.app) \(manifest.channel) \(manifest.version)")
        }
        let highest = manifest.rollout?.steps.map(\.percent).max() ?? 100
        if let percent, percent > highest {
            throw refuse("percent \(Self.text(percent)) is above the \(Self.text(highest)) % release \(version)'s manifest allows")
        }
        if let limit = manifest.expires {
            guard expires <= limit else {
                throw refuse("expires at \(RFC3339.format(expires)), after the manifest of release \(version) (\(RFC3339.format(limit)))")
            }
        } else if expires.timeIntervalSince(issued) > Self.maxLifetime {
            throw refuse("holds from \(RFC3339.format(issued)) to \(RFC3339.format(expires)): at most 31 days")
        }
        if let above = revoked.first(where: { $0 > manifest.version }) {
            throw refuse("revokes \(above), above release \(version): only published versions can be revoked")
        }
        if let apply {
            do {
                _ = try (manifest.apply ?? .nextStart).restricted(by: apply)
            } catch let error as ApplyPolicyError {
                throw refuse(error.message)
            }
        }
    }

    static func text(_ percent: Double) -> String {
        percent == percent.rounded() ? String(Int(percent)) : String(format: "%.2f", percent)
    }
}

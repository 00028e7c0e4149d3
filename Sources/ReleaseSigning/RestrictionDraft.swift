import ApplyPolicy
import ClientFoundation
import DeviceTargeting
import Foundation
import SignedManifest
import StrictJSON

/// A restriction being written (`clientctl rollout restrict`): what it restricts and how,
/// signed by the rollout role's keys.
public struct RestrictionDraft: Sendable, Equatable {
    public var manifest: Manifest
    public var issued: Date
    public var expires: Date
    public var percent: Double?
    public var paused: Bool
    public var revoked: [Version]
    /// A more patient apply policy (`rollout restrict --apply`); nil: none.
    package var apply: ApplyPolicy?
    /// A narrower target: both it and the release's own must admit a device; nil: none.
    public var target: TargetExpression?

    public init(for manifest: Manifest, issued: Date, expires: Date, percent: Double? = nil, paused: Bool = false, revoked: [Version] = []) {
        self.manifest = manifest
        self.issued = issued
        self.expires = expires
        self.percent = percent
        self.paused = paused
        self.revoked = revoked
    }

    /// The object without signatures: what every signer signs.
    public var unsignedObject: JSONObject {
        var o = JSONObject()
        o["format"] = .string(Restriction.format)
        o["app"] = .string(manifest.app)
        o["channel"] = .string(manifest.channel)
        var bound = JSONObject()
        bound["version"] = .string(manifest.version.description)
        bound["sha256"] = .string(Restriction.digest(of: manifest))
        o["manifest"] = .object(bound)
        o["issued"] = .string(RFC3339.format(issued))
        o["expires"] = .string(RFC3339.format(expires))
        if percent != nil || paused {
            var r = JSONObject()
            if let percent { r["percent"] = Rollout.number(percent) }
            if paused { r["paused"] = .bool(true) }
            o["rollout"] = .object(r)
        }
        if !revoked.isEmpty {
            var seen = Set<String>()
            o["revoked"] = .array(revoked.map(\.description).filter { seen.insert($0).inserted }.map { .string($0) })
        }
        if let apply { o["apply"] = apply.jsonValue }
        if let target { o["target"] = .string(target.description) }
        return o
    }

    /// Signs with each of `signers` (distinct keys) and returns the restriction as parsed
    /// back and checked against its manifest, so one a device would refuse for its content
    /// is never written.
    /// - Throws: ``ReleaseSigningError`` `.invalidArgument` without signers,
    ///   `.restrictionRefused` for a restriction that asks for more than the manifest.
    public func sign(by signers: [any DocumentSigner], source: String = "restriction") async throws -> Restriction {
        guard !signers.isEmpty else { throw ReleaseSigningError(.invalidArgument, "a restriction needs at least one rollout key") }
        let o = try await SignedObject.sign(unsignedObject, by: signers)
        let restriction = try Restriction.parse(JSONPrettyPrinter.render(.object(o)), source: source)
        try restriction.requireWithin(manifest) { ReleaseSigningError(.restrictionRefused, "\(source): \($0)") }
        return restriction
    }
}

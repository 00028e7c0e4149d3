import ClientFoundation
import Foundation
import StrictJSON

/// An older release a channel offers beside its newest (`alongside` of the newest
/// manifest; docs/targeting.md#two-releases-at-once): the devices the newest release is
/// not for (its target, its rollout) take the newest release of these that is for them.
///
/// Each entry names one signed manifest of the channel's `index.json` by its version and
/// the SHA-256 of its signed bytes (``Manifest/signedDigest``), so the index, which is not
/// signed as a whole, can only serve exactly the manifest the newest one names: an older
/// signing of the same version (before a target was added, say) is refused.
public struct AlongsideRelease: Sendable, Equatable, Hashable {
    /// The release's version.
    public var version: Version
    /// SHA-256 (lowercase hex) of that release's manifest's signed bytes.
    public var digest: String

    /// Most releases a manifest names beside itself.
    public static let maxCount = 4

    public init(version: Version, digest: String) {
        self.version = version
        self.digest = digest
    }

    /// The entry naming `manifest`.
    public init(naming manifest: Manifest) {
        self.init(version: manifest.version, digest: manifest.signedDigest)
    }

    /// True when `manifest` is exactly the one this entry names.
    public func names(_ manifest: Manifest) -> Bool { manifest.version == version && manifest.signedDigest == digest }

    /// The JSON object as the manifest carries it.
    public var jsonValue: JSONValue {
        var o = JSONObject()
        o["version"] = .string(version.description)
        o["sha256"] = .string(digest)
        return .object(o)
    }
}

extension Manifest {
    /// SHA-256 (lowercase hex) of ``signedBytes``: the same for any whitespace, member order
    /// or added countersignature, another for any re-signed edit (a later `published`).
    public var signedDigest: String { Digest.hex(.sha256, of: Data(signedBytes)) }
}

extension ManifestFieldReader {
    /// `alongside`: at most ``AlongsideRelease/maxCount`` distinct versions below `own`.
    func alongside(_ name: String, own: Version) throws -> [AlongsideRelease] {
        guard case .array(let entries) = try value(name) else {
            throw ManifestRejection(.wrongType, field: name, "field '\(name)' must be an array of {\"version\", \"sha256\"} objects")
        }
        guard entries.count <= AlongsideRelease.maxCount else {
            throw invalid(name, "names \(entries.count) releases, at most \(AlongsideRelease.maxCount)")
        }
        var out: [AlongsideRelease] = []
        for entry in entries {
            guard case .object(let o) = entry, o.count == 2 else {
                throw invalid(name, "entries must be objects with exactly 'version' and 'sha256'")
            }
            let fields = ManifestFieldReader(object: o)
            let release = AlongsideRelease(version: try fields.version("version"), digest: try fields.sha256("sha256"))
            guard release.version < own else { throw invalid(name, "names \(release.version), not below the release's own \(own)") }
            guard !out.contains(where: { $0.version == release.version }) else { throw invalid(name, "names \(release.version) twice") }
            out.append(release)
        }
        return out
    }
}

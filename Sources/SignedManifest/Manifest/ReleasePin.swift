import ClientFoundation
import DeviceTargeting
import Foundation
import StrictJSON

/// A pin of the channel's newest manifest (`pins`; docs/targeting.md#pins): the devices a
/// target admits stay at most on one release of the channel, whatever newer one it
/// offers ("keep the lobby kiosks on 1.3.2 until the event is over"). Signed by the
/// release role with the manifest, carried by every later publish of the channel until
/// `rollout unpin` drops it.
///
/// A pinned device takes nothing above the pinned version; one below it takes the pinned
/// release, which the pin names by the digest of its manifest in `index.json` (as
/// ``AlongsideRelease`` does; a pin of the manifest's own version means the manifest
/// itself). A device never goes down to it: a device that accepted a newer release keeps it.
public struct ReleasePin: Sendable, Equatable, Hashable {
    /// Which devices are pinned.
    public var target: TargetExpression
    /// The release they stay on, by version and manifest digest.
    public var release: AlongsideRelease

    /// Most pins a manifest carries (the first that admits a device holds).
    public static let maxCount = 16

    public init(target: TargetExpression, release: AlongsideRelease) {
        self.target = target
        self.release = release
    }

    /// The JSON object as the manifest carries it.
    public var jsonValue: JSONValue {
        var o = JSONObject()
        o["target"] = .string(target.description)
        o["version"] = .string(release.version.description)
        o["sha256"] = .string(release.digest)
        return .object(o)
    }

    /// The first of `pins` that admits `device`, or nil; `inCohort` answers the cohort
    /// tests (`TargetExpression.admits(_:inCohort:)`).
    public static func first(
        of pins: [ReleasePin], admitting device: TargetDevice, inCohort: (String) throws -> Bool = { _ in false }
    ) rethrows -> ReleasePin? {
        try pins.first { try $0.target.admits(device, inCohort: inCohort) }
    }
}

extension ManifestFieldReader {
    /// `pins`: at most ``ReleasePin/maxCount`` of `{"target", "version", "sha256"}`, each
    /// version at most `own`.
    func pins(_ name: String, own: Version) throws -> [ReleasePin] {
        guard case .array(let entries) = try value(name) else {
            throw ManifestRejection(.wrongType, field: name, "field '\(name)' must be an array of {\"target\", \"version\", \"sha256\"} objects")
        }
        guard entries.count <= ReleasePin.maxCount else { throw invalid(name, "holds \(entries.count) pins, at most \(ReleasePin.maxCount)") }
        return try entries.map { entry in
            guard case .object(let o) = entry, o.count == 3 else {
                throw invalid(name, "entries must be objects with exactly 'target', 'version' and 'sha256'")
            }
            let fields = ManifestFieldReader(object: o)
            let pin = ReleasePin(
                target: try fields.target("target"),
                release: AlongsideRelease(version: try fields.version("version"), digest: try fields.sha256("sha256")))
            guard pin.release.version <= own else {
                throw invalid(name, "pins to \(pin.release.version), above the release's own \(own)")
            }
            return pin
        }
    }
}

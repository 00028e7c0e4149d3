import ClientFoundation
import DeviceTargeting
import Foundation
import SignedManifest
import StrictJSON

/// The edits of who takes a release (docs/targeting.md): the releases offered beside the
/// newest, and pins, each naming releases of `index.json` by the digest of their manifest.
extension ChannelEditor {
    static func setAlongside(_ o: inout JSONObject, current: Manifest, versions: [Version], index: ReleaseIndex, indexPath: String) throws {
        let beside = try AlongsidePlan.releases(versions, own: current.version, index: index, indexPath: indexPath)
        if beside.isEmpty {
            o.removeValue(forKey: "alongside")
        } else {
            o["alongside"] = .array(beside.map { AlongsideRelease(naming: $0).jsonValue })
        }
        if let rollout = current.rollout {
            o["rollout"] = try AlongsidePlan.placed(rollout, version: current.version, beside: beside).jsonValue
        }
    }

    static func pin(
        _ o: inout JSONObject, current: Manifest, target: TargetExpression, version: Version, index: ReleaseIndex, indexPath: String,
        now: Date = Date(), allowExpired: Bool = false
    ) throws {
        guard version <= current.version else {
            throw ArchivePublishingError(
                .invalidArgument, "a pin holds devices at most on the channel's release \(current.version) or an older one, not \(version)")
        }
        // A pin of the release itself names it as signed now; a device pinned to the newest
        // release judges the newest, and a later publish names it again.
        let pinned =
            version == current.version
            ? current : try AlongsidePlan.releases([version], own: current.version, index: index, indexPath: indexPath, flag: "--version")[0]
        // A pin no device can follow holds its devices on no release at all (issue 65).
        if current.revoked.contains(version) {
            throw ArchivePublishingError(
                .unfollowablePin,
                "release \(version) is revoked by the channel's release \(current.version): devices never take it, so the devices of "
                    + "'\(target)' would take no release at all; pin another version, nothing was changed")
        }
        if version != current.version, let expires = pinned.expires, expires <= now, !allowExpired {
            throw ArchivePublishingError(
                .needsFlag,
                "release \(version) expired at \(RFC3339.format(expires)): devices refuse it, so the devices of '\(target)' would "
                    + "keep what they run and take no release until it is unpinned; give --allow-expired to hold them so, nothing was changed")
        }
        var pins = current.pins.filter { $0.target != target }
        pins.append(ReleasePin(target: target, release: AlongsideRelease(naming: pinned)))
        guard pins.count <= ReleasePin.maxCount else {
            throw ArchivePublishingError(.invalidArgument, "release \(current.version) has \(ReleasePin.maxCount) pins already: unpin one first")
        }
        o["pins"] = .array(pins.map(\.jsonValue))
    }

    static func unpin(_ o: inout JSONObject, current: Manifest, target: TargetExpression?) throws {
        let pins = target.map { t in current.pins.filter { $0.target != t } } ?? []
        if let target, pins.count == current.pins.count {
            throw ArchivePublishingError(.notFound, "release \(current.version) has no pin of the target '\(target)'")
        }
        if pins.isEmpty { o.removeValue(forKey: "pins") } else { o["pins"] = .array(pins.map(\.jsonValue)) }
    }
}

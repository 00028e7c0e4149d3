import ClientFoundation
import Foundation
import SignedManifest

/// What `publish --alongside` and `rollout set --alongside` sign into the newest manifest:
/// the older releases of the channel offered beside it (docs/targeting.md#two-releases-at-once),
/// each named by the digest of its manifest in `index.json` as published now, and where the
/// new release's rollout draws its devices so that two partial releases never take the
/// same device unless their draws differ on purpose.
enum AlongsidePlan {
    /// The entries naming `versions` in `index`, newest first.
    /// - Throws: `ArchivePublishingError` `.notFound` for a version the index does not
    ///   hold, `.invalidArgument` for one not below `own`, twice, or too many.
    /// - Parameter flag: the flag that named them, for messages (`--alongside`, `--version`).
    static func releases(
        _ versions: [Version], own: Version, index: ReleaseIndex, indexPath: String, flag: String = "--alongside"
    ) throws -> [Manifest] {
        guard versions.count <= AlongsideRelease.maxCount else {
            throw ArchivePublishingError(
                .invalidArgument, "\(flag) names \(versions.count) releases, at most \(AlongsideRelease.maxCount)")
        }
        var out: [Manifest] = []
        for version in versions {
            guard version < own else {
                throw ArchivePublishingError(.invalidArgument, "\(flag) \(version) is not below the release \(own) itself")
            }
            guard !out.contains(where: { $0.version == version }) else {
                throw ArchivePublishingError(.invalidArgument, "\(flag) names \(version) twice")
            }
            let entry = index.releases.lazy.compactMap { try? Manifest.validate($0).get() }.first { $0.version == version }
            guard let entry else {
                throw ArchivePublishingError(.notFound, "\(flag) \(version): \(indexPath) holds no release \(version)")
            }
            out.append(entry)
        }
        return out.sorted { $1.version < $0.version }
    }

    /// `rollout` placed in the draw of the partial releases it is offered beside: without
    /// its own ``Rollout/draw`` it takes the first such release's draw and the places after
    /// the highest any of them reaches, so the two never take the same device.
    /// - Throws: `ArchivePublishingError` `.invalidArgument` when the places run past 100 %
    ///   or overlap those of a release of the same draw.
    static func placed(_ rollout: Rollout, version: Version, beside: [Manifest]) throws -> Rollout {
        let partial = beside.filter { $0.rollout != nil }
        guard !partial.isEmpty else { return rollout }
        var placed = rollout
        if placed.draw == nil, placed.from == 0, let first = partial.first?.rollout, let firstVersion = partial.first?.version {
            let draw = first.drawName(version: firstVersion.description)
            placed.draw = draw
            placed.from =
                partial.compactMap { m in
                    m.rollout.flatMap { $0.drawName(version: m.version.description) == draw ? $0.from + $0.highestPercent : nil }
                }.max() ?? 0
        }
        let own = placed.places(percent: placed.highestPercent)
        guard placed.from + placed.highestPercent <= 100 else {
            throw ArchivePublishingError(
                .invalidArgument,
                "release \(version) would take places from \(FeedNumber.text(placed.from)) % to \(FeedNumber.text(placed.from + placed.highestPercent)) % "
                    + "of the draw \(placed.drawName(version: version.description)), past 100 %: lower its percent or theirs")
        }
        for m in partial {
            guard let other = m.rollout, other.drawName(version: m.version.description) == placed.drawName(version: version.description) else {
                continue
            }
            if other.places(percent: other.highestPercent).overlaps(own) {
                throw ArchivePublishingError(
                    .invalidArgument,
                    "release \(version) would take places of release \(m.version) in the draw \(placed.drawName(version: version.description)) "
                        + "(\(FeedNumber.text(other.from))–\(FeedNumber.text(other.from + other.highestPercent)) %): "
                        + "give --draw-from past them, or another --draw to let the two share devices")
            }
        }
        return placed
    }
}

/// Percents for messages: whole numbers without a fraction.
enum FeedNumber {
    static func text(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(format: "%.2f", value)
    }
}

import ClientFoundation
import Foundation
import SignedManifest

/// The releases of `index.json` a device may still take although the manifest names a
/// newer one: a device whose shell the current release does not run on takes the newest
/// release of the index that does (docs/formats.md#device-policy). Pure: no I/O.
enum ShellFallbacks {
    /// A shell range: `minShellVersion` to `maxShellVersion` inclusive (nil: no upper bound).
    typealias Range = (min: Version, max: Version?)

    /// The releases of `indexed` some shell takes instead of `current`: newest first, each
    /// one whose shell range is not covered by the newer releases' ranges, not revoked by
    /// `current`, not expired at `now`, below `current`.
    static func releases(_ indexed: [Manifest], current: Manifest, now: Date) -> [Manifest] {
        var newer: [Range] = [(current.minShellVersion, current.maxShellVersion)]
        var taken: [Manifest] = []
        for release in indexed.sorted(by: { $0.version > $1.version }) where release.version < current.version {
            guard !current.revoked.contains(release.version), release.expires.map({ $0 > now }) ?? true else { continue }
            let range: Range = (release.minShellVersion, release.maxShellVersion)
            if !covered(range, by: newer) { taken.append(release) }
            newer.append(range)
        }
        return taken
    }

    /// True when every version in `range` is in one of `ranges` (touching ends count as
    /// joined: versions are compared, not enumerated).
    static func covered(_ range: Range, by ranges: [Range]) -> Bool {
        var cursor = range.min
        var first = true
        for _ in 0...ranges.count {
            // The range reaching furthest among those that start at or before the cursor.
            let reaching = ranges.filter { $0.min <= cursor }
            if reaching.contains(where: { $0.max == nil }) { return true }
            guard let furthest = reaching.compactMap(\.max).max(), first ? furthest >= cursor : furthest > cursor else { return false }
            if let end = range.max, furthest >= end { return true }
            cursor = furthest
            first = false
        }
        return false
    }
}

import ClientFoundation
import Foundation
import SignedManifest
import StrictJSON

/// The pointers of a channel after a push: what the store holds merged with what the
/// release folder holds, under the same version rules as `publish` (docs/formats.md#push).
///
/// Pure: no I/O. Every release of either side is kept (nothing is lost); a version both
/// hold must be the same release (archive, URL, size, shell range), and of its signed
/// copies the one published last wins (a rollout edit or a revocation re-signs it later).
/// A version new to the store must be above the store's newest; `manifest.json` is always
/// the newest release's latest copy, so it never moves backwards.
package struct ChannelMerge: Sendable, Equatable {
    /// The merged `index.json`.
    package var index: ReleaseIndex
    /// The merged `manifest.json`.
    package var manifest: Manifest
    /// Versions the store did not hold before.
    package var added: [Version]
    /// Versions whose signed copy was replaced by one published later.
    package var updated: [Version]

    /// One side of the merge: an index and its manifest, either possibly absent.
    package struct Side: Sendable {
        package var index: ReleaseIndex?
        package var manifest: JSONObject?
        /// Where it comes from, for messages (`s3://bucket/prefix/stable`, a folder).
        package var name: String
        package init(index: ReleaseIndex?, manifest: JSONObject?, name: String) {
            self.index = index
            self.manifest = manifest
            self.name = name
        }
    }

    /// Merges the folder's releases (`local`) into the store's (`remote`).
    /// - Throws: `ArchivePublishingError` `.conflict` (other app or channel; a version held
    ///   with other contents; a malformed entry), `.notNewer` (a new version below the
    ///   store's newest), `.notFound` (the folder has no releases).
    package static func merge(remote: Side, local: Side) throws -> ChannelMerge {
        guard let localIndex = local.index else {
            throw ArchivePublishingError(.notFound, "\(local.name) has no index.json: publish a release first")
        }
        if let remoteIndex = remote.index, remoteIndex.app != localIndex.app || remoteIndex.channel != localIndex.channel {
            throw ArchivePublishingError(
                .conflict,
                "\(remote.name)/index.json is for app \(remoteIndex.app), channel \(remoteIndex.channel); \(local.name) is \(localIndex.app), \(localIndex.channel)"
            )
        }
        let held = try releases(of: remote)
        let offered = try releases(of: local)
        let storeNewest = held.keys.max()
        var merged = held
        var added: [Version] = []
        var updated: [Version] = []
        for (version, copy) in offered.sorted(by: { $0.key < $1.key }) {
            guard let existing = held[version] else {
                if let storeNewest, version < storeNewest {
                    throw ArchivePublishingError(
                        .notNewer,
                        "version \(version) is not above \(storeNewest), the newest release of \(remote.name); publish a higher version")
                }
                merged[version] = copy
                added.append(version)
                continue
            }
            for field in ["sha256", "url", "size", "minShellVersion", "maxShellVersion"] where existing.object[field] != copy.object[field] {
                throw ArchivePublishingError(
                    .conflict,
                    "version \(version) is already in \(remote.name) with another \(field) (\(describe(existing.object[field])) there, \(describe(copy.object[field])) in \(local.name)); publish a new version"
                )
            }
            if copy.published > existing.published {
                merged[version] = copy
                updated.append(version)
            }
        }
        guard let newest = merged.keys.max(), let manifest = merged[newest] else {
            throw ArchivePublishingError(.notFound, "\(local.name) has no releases to push")
        }
        var index = ReleaseIndex(app: localIndex.app, channel: localIndex.channel)
        for version in merged.keys.sorted(by: >) { if let m = merged[version] { index.releases.append(m.object) } }
        return ChannelMerge(index: index, manifest: manifest, added: added, updated: updated)
    }

    /// The releases of one side by version, the latest-published copy of each (its index
    /// entries and its manifest).
    static func releases(of side: Side) throws -> [Version: Manifest] {
        var objects = side.index?.releases ?? []
        if let manifest = side.manifest { objects.append(manifest) }
        var byVersion: [Version: Manifest] = [:]
        for (k, object) in objects.enumerated() {
            let location = k < (side.index?.releases.count ?? 0) ? "\(side.name)/index.json releases[\(k)]" : "\(side.name)/manifest.json"
            let manifest: Manifest
            switch Manifest.validate(object) {
            case .success(let m): manifest = m
            case .failure(let rejection): throw ArchivePublishingError(.conflict, "\(location) is not a valid manifest: \(rejection)")
            }
            if let index = side.index, manifest.app != index.app || manifest.channel != index.channel {
                throw ArchivePublishingError(
                    .conflict, "\(location) is for app \(manifest.app), channel \(manifest.channel), not \(index.app), \(index.channel)")
            }
            if let other = byVersion[manifest.version], other.published >= manifest.published { continue }
            byVersion[manifest.version] = manifest
        }
        return byVersion
    }

    static func describe(_ value: JSONValue?) -> String {
        switch value {
        case .string(let s)?: return s
        case .none: return "none"
        case let v?: return String(decoding: JSONPrettyPrinter.render(v), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }
}

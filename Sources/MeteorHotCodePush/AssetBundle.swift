import ClientFoundation
import ClientUpdater
import Foundation

/// A Meteor asset bundle on disk: a folder holding `program.json`, `index.html` and the
/// bundle's own files at their manifest `path`s, plus a parent (the embedded bundle) that
/// serves every asset this bundle shares with it.
///
/// An asset is *own* unless the parent has the same content: the same hash at the same
/// URL path, the path spelled with or without a leading `/__cordova` segment (the
/// plugin's `cachedAssetForURLPath` rule, made blind to that prefix so that a seed built
/// by `@meteorjs/capacitor`, whose URLs lost it, still donates its files:
/// docs/meteor.md#the-seed-as-a-donor). A hash-less asset matches only when it is
/// `cacheable`; index.html therefore is always own.
package final class AssetBundle: Sendable {
    /// The bundle folder.
    package let directory: String
    package let manifest: AssetManifest
    /// The embedded bundle, for a downloaded one; `nil` for the embedded bundle itself.
    package let parent: AssetBundle?
    /// Assets whose files live in ``directory`` (manifest order, index.html last).
    package let ownAssets: [AssetManifest.Asset]
    private let ownByURLPath: [String: AssetManifest.Asset]
    /// Own assets by ``AssetManifest/Asset/contentKey`` (both spellings of a URL path).
    private let ownByContentKey: [String: [AssetManifest.Asset]]
    /// Every manifest asset by URL path.
    private let byURLPath: [String: AssetManifest.Asset]

    /// The manifest version.
    package var version: String { manifest.version }

    package init(directory: String, manifest: AssetManifest, parent: AssetBundle?) {
        self.directory = directory
        self.manifest = manifest
        self.parent = parent
        let own = manifest.assets.filter { parent?.cachedAsset(forURLPath: $0.urlPath, hash: $0.hash) == nil }
        self.ownAssets = own
        self.ownByURLPath = Dictionary(own.map { ($0.urlPath, $0) }, uniquingKeysWith: { first, _ in first })
        self.ownByContentKey = Dictionary(grouping: own, by: \.contentKey)
        self.byURLPath = Dictionary(manifest.assets.map { ($0.urlPath, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// Loads `<directory>/program.json`.
    /// - Throws: ``MeteorError`` when the file is missing or invalid.
    package static func load(
        directory: String, platform: CompatPlatform, parent: AssetBundle?,
        limits: AssetManifest.Limits = AssetManifest.Limits()
    ) throws -> AssetBundle {
        let path = directory + "/program.json"
        // At most the manifest cap, checked before reading (a FIFO or a huge file in a
        // bundle is refused, not read).
        guard let data = try BoundedFile.read(path, cap: limits.maxBytes, code: MeteorError.Code.invalidManifest, tooLarge: .tooLarge) else {
            throw MeteorError(.invalidManifest, "cannot read \(path)")
        }
        let manifest: AssetManifest
        do {
            manifest = try AssetManifest.parse(data, platform: platform, limits: limits)
        } catch let error as MeteorError {
            throw MeteorError(error.code, "\(path): \(error.message)", underlying: error)
        }
        return AssetBundle(directory: directory, manifest: manifest, parent: parent)
    }

    /// This bundle's own asset at `urlPath`, spelled with or without a leading `/__cordova`
    /// segment (the same spelling first), when its content is the one `hash` names.
    package func cachedAsset(forURLPath urlPath: String, hash: String?) -> AssetManifest.Asset? {
        let matching = (ownByContentKey[AssetPath.contentKey(urlPath)] ?? []).filter { ($0.cacheable || $0.hash != nil) && $0.hash == hash }
        return matching.first { $0.urlPath == urlPath } ?? matching.first
    }

    /// The asset holding `asset`'s content and its file: this bundle's own, else the parent's.
    private func holder(of asset: AssetManifest.Asset) -> (asset: AssetManifest.Asset, file: String)? {
        if let match = cachedAsset(forURLPath: asset.urlPath, hash: asset.hash) { return (match, file(of: match)) }
        return parent?.holder(of: asset)
    }

    /// The file of one of this bundle's own assets.
    package func file(of asset: AssetManifest.Asset) -> String {
        directory + "/" + asset.filePath
    }

    /// The asset served at `urlPath` and the file holding it: own assets first, then the
    /// parent's asset of the same content (under either spelling of the URL path).
    package func resolve(urlPath: String) -> (asset: AssetManifest.Asset, file: String)? {
        if let own = ownByURLPath[urlPath] { return (own, file(of: own)) }
        guard let parent else { return nil }
        if let asset = byURLPath[urlPath], let held = parent.holder(of: asset) { return held }
        return parent.resolve(urlPath: urlPath)
    }

    /// The runtime config of this bundle's index.html.
    package func runtimeConfig() throws -> RuntimeConfig {
        try RuntimeConfig.load(indexFile: directory + "/index.html")
    }

    /// Every file of the bundle by URL path, inherited ones included, as the organizer
    /// needs them. Missing source maps are left out (they are optional); any other
    /// missing file is an error.
    package func servedAssets() throws -> [ServedAsset] {
        var result: [ServedAsset] = []
        for asset in manifest.assets {
            guard let (_, file) = resolve(urlPath: asset.urlPath), FileManager.default.fileExists(atPath: file) else {
                if asset.isSourceMap { continue }
                throw MeteorError(.io, "version \(version) is incomplete: no file for asset \(asset.urlPath)")
            }
            result.append(
                ServedAsset(
                    urlPath: asset.urlPath, sourceFile: file, cacheable: asset.cacheable, hash: asset.hash,
                    sourceMapURLPath: asset.sourceMapURLPath, type: asset.type))
        }
        return result
    }
}

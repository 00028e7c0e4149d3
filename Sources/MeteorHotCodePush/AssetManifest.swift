import ClientFoundation
import ClientUpdater
import Foundation
import StrictJSON

/// Which entry of `cordovaCompatibilityVersions` a device compares (the shell's platform).
package enum CompatPlatform: String, Sendable, Codable, CaseIterable {
    /// `cordovaCompatibilityVersions.ios` (the default: the iOS plugin is the reference).
    case ios
    /// `cordovaCompatibilityVersions.android`.
    case android
}

/// A parsed Meteor `web-program-pre1` manifest (`/__cordova/manifest.json`, or a bundle's
/// `program.json`), reduced to what a device downloads and serves.
///
/// The bytes are read with the strict JSON reader of the archive channel (``StrictJSON``):
/// duplicate keys, trailing data or invalid UTF-8 are refused, so no two readers can
/// disagree about what a manifest says. Parsing then follows the iOS plugin: only `where == "client"` entries are kept, entries
/// lacking `url`, `path`, `type`, `hash` or `cacheable` are skipped, a missing `manifest`
/// array means no assets. Source maps become assets of their own and `index.html` is
/// synthesised for `/`. Beyond the original, every path-like field is validated so that
/// nothing resolves outside the bundle folder, and size and entry count are capped.
package struct AssetManifest: Sendable, Equatable {
    /// The only manifest format this reader understands.
    package static let format = "web-program-pre1"
    /// Folder names under `meteor/` that a version may not take.
    package static let reservedVersionNames: Set<String> = ["Downloading", "PartialDownload"]

    /// One file of a bundle.
    package struct Asset: Sendable, Equatable, Hashable {
        /// Where the file lives, relative to the bundle folder (manifest `path`).
        package var filePath: String
        /// The URL path it is served at, without query (`/` for index.html).
        package var urlPath: String
        /// The manifest `type` (`js`, `css`, `asset`, …); `json` for source maps, `html` for index.html.
        package var type: String
        /// True when the server marks it cacheable (hashed JS/CSS, source maps).
        package var cacheable: Bool
        /// The manifest `hash`: an opaque identifier (40 lowercase hex), which current
        /// servers also send as the quoted ETag. Since Meteor 1.4.2.1 it is not a digest of
        /// the bytes (bundler.js `File#hash()`); `nil` for index.html and source maps.
        package var hash: String?
        /// The manifest `size`, when given: a cap (the served bytes may carry an appended
        /// source-map line), not an exact length.
        package var size: Int64?
        /// URL path of this asset's source map (`sourceMapUrl`).
        package var sourceMapURLPath: String?

        package init(
            filePath: String, urlPath: String, type: String, cacheable: Bool, hash: String? = nil,
            size: Int64? = nil, sourceMapURLPath: String? = nil
        ) {
            self.filePath = filePath
            self.urlPath = urlPath
            self.type = type
            self.cacheable = cacheable
            self.hash = hash
            self.size = size
            self.sourceMapURLPath = sourceMapURLPath
        }

        /// ``urlPath`` as content is matched: without a leading `/__cordova` segment, so a
        /// seed built by `@meteorjs/capacitor` (`/x`) and a server (`/__cordova/x`) name one
        /// file alike.
        package var contentKey: String { AssetPath.contentKey(urlPath) }

        /// True for the synthesised index page.
        package var isIndexPage: Bool { filePath == "index.html" && urlPath == "/" }
        /// True for a source map (the only hash-less assets besides index.html); a missing one is tolerated.
        package var isSourceMap: Bool { hash == nil && !isIndexPage }
    }

    /// Caps applied while parsing.
    package struct Limits: Sendable, Equatable {
        /// Largest manifest accepted, in bytes (default 8 MiB).
        package var maxBytes: Int
        /// Most assets accepted (default 100,000).
        package var maxAssets: Int
        package init(maxBytes: Int = 8 << 20, maxAssets: Int = 100_000) {
            self.maxBytes = maxBytes
            self.maxAssets = maxAssets
        }
    }

    /// The manifest `version`; validated to be usable as a folder name.
    package var version: String
    /// `cordovaCompatibilityVersions[platform]`.
    package var cordovaCompatibilityVersion: String
    /// Client assets, their source maps, and index.html (last), in manifest order.
    package var assets: [Asset]

    package init(version: String, cordovaCompatibilityVersion: String, assets: [Asset]) {
        self.version = version
        self.cordovaCompatibilityVersion = cordovaCompatibilityVersion
        self.assets = assets
    }

    /// The synthesised index page entry.
    package static let indexPage = Asset(filePath: "index.html", urlPath: "/", type: "html", cacheable: false)

    /// Parses manifest bytes for `platform`.
    /// - Throws: ``MeteorError`` `.tooLarge`, `.invalidManifest` or `.unsafePath`, with
    ///   the original plugin's wording where it had one.
    package static func parse(_ data: Data, platform: CompatPlatform, limits: Limits = Limits()) throws -> AssetManifest {
        guard data.count <= limits.maxBytes else {
            throw MeteorError(.tooLarge, "Asset manifest is \(data.count) bytes, more than the limit of \(limits.maxBytes)")
        }
        let root: JSONObject
        do {
            root = try StrictJSON.parseObject(data, limits: .init(maxBytes: limits.maxBytes, maxDepth: 32), source: "asset manifest")
        } catch let error as StrictJSONError {
            throw MeteorError(.invalidManifest, "Error parsing asset manifest: \(error.message)", underlying: error)
        }
        if let format = root["format"] {
            guard format.stringValue == Self.format else {
                throw MeteorError(
                    .invalidManifest,
                    "The asset manifest format is incompatible: \(String(describing: format.stringValue ?? format.typeName).prefix(80))")
            }
        }
        guard let version = root["version"]?.stringValue else {
            throw MeteorError(.invalidManifest, "Asset manifest does not have a version")
        }
        guard RootLayoutName.isUsableVersion(version) else {
            throw MeteorError(.unsafePath, "Asset manifest version '\(version.prefix(80))' cannot be used as a folder name")
        }
        guard let compatVersion = root["cordovaCompatibilityVersions"]?.objectValue?[platform.rawValue]?.stringValue else {
            throw MeteorError(.invalidManifest, "Asset manifest does not have a cordovaCompatibilityVersion")
        }
        var assets: [Asset] = []
        if let entries = root["manifest"]?.arrayValue {
            guard entries.count <= limits.maxAssets else {
                throw MeteorError(
                    .tooLarge, "Asset manifest of version \(version) lists \(entries.count) entries, more than the limit of \(limits.maxAssets)")
            }
            for case .object(let entry) in entries {
                guard entry["where"]?.stringValue == "client" else { continue }
                assets.append(contentsOf: try clientAssets(entry, version: version))
            }
        }
        assets.append(indexPage)
        try checkConflicts(assets, version: version)
        return AssetManifest(version: version, cordovaCompatibilityVersion: compatVersion, assets: assets)
    }

    /// The asset (and its source map) of one `where == "client"` entry; none when the
    /// entry lacks a field the iOS plugin requires.
    private static func clientAssets(_ entry: JSONObject, version: String) throws -> [Asset] {
        guard let url = entry["url"]?.stringValue, let path = entry["path"]?.stringValue,
            let type = entry["type"]?.stringValue, let hash = entry["hash"]?.stringValue,
            case .bool(let cacheable)? = entry["cacheable"]
        else { return [] }
        guard let urlPath = AssetPath.urlPath(fromURL: url) else {
            throw MeteorError(.unsafePath, "Asset manifest of version \(version) has an unsafe url: \(url.prefix(200))")
        }
        guard let filePath = AssetPath.filePath(path) else {
            throw MeteorError(.unsafePath, "Asset manifest of version \(version) has an unsafe path: \(path.prefix(200))")
        }
        guard LowerHex.matches(hash.utf8, count: 40) else {
            throw MeteorError(.invalidManifest, "Asset manifest of version \(version) has an invalid hash for asset: \(urlPath)")
        }
        let size = entry["size"]?.integerValue.flatMap { $0 >= 0 ? $0 : nil }
        var asset = Asset(filePath: filePath, urlPath: urlPath, type: type, cacheable: cacheable, hash: hash, size: size)
        var result: [Asset] = []
        if let mapPath = entry["sourceMap"]?.stringValue, let mapURL = entry["sourceMapUrl"]?.stringValue {
            guard let mapURLPath = AssetPath.urlPath(fromURL: mapURL) else {
                throw MeteorError(.unsafePath, "Asset manifest of version \(version) has an unsafe sourceMapUrl: \(mapURL.prefix(200))")
            }
            guard let mapFilePath = AssetPath.filePath(mapPath) else {
                throw MeteorError(.unsafePath, "Asset manifest of version \(version) has an unsafe sourceMap: \(mapPath.prefix(200))")
            }
            asset.sourceMapURLPath = mapURLPath
            result.append(Asset(filePath: mapFilePath, urlPath: mapURLPath, type: "json", cacheable: true))
        }
        result.insert(asset, at: 0)
        return result
    }

    /// Rejects two assets at one URL path, one file with two contents, a file that is
    /// also another file's folder, and files that would replace `program.json` or index.html.
    private static func checkConflicts(_ assets: [Asset], version: String) throws {
        var byURL: [String: Asset] = [:]
        var byFile: [String: Asset] = [:]
        for asset in assets {
            if let other = byURL[asset.urlPath], other != asset {
                throw MeteorError(.invalidManifest, "Asset manifest of version \(version) lists url \(asset.urlPath) twice")
            }
            byURL[asset.urlPath] = asset
            if !asset.isIndexPage, ["index.html", "program.json", IntegrityRecord.fileName].contains(asset.filePath) {
                throw MeteorError(
                    .unsafePath, "Asset manifest of version \(version) has an asset that would replace \(asset.filePath): \(asset.urlPath)")
            }
            if let other = byFile[asset.filePath], other.hash != asset.hash {
                throw MeteorError(.invalidManifest, "Asset manifest of version \(version) stores two different contents at \(asset.filePath)")
            }
            byFile[asset.filePath] = asset
        }
        for set in [Set(byFile.keys), Set(byURL.keys.map { String($0.dropFirst()) })] {
            for path in set {
                var prefix = Substring(path)
                while let slash = prefix.lastIndex(of: "/") {
                    prefix = prefix[..<slash]
                    if set.contains(String(prefix)) {
                        throw MeteorError(.invalidManifest, "Asset manifest of version \(version) uses \(prefix) both as a file and as a folder")
                    }
                }
            }
        }
    }

    /// The asset served at `urlPath`, if any.
    package func asset(forURLPath urlPath: String) -> Asset? {
        assets.first { $0.urlPath == urlPath }
    }
}

/// Version strings that may become a folder under `meteor/`.
enum RootLayoutName {
    static func isUsableVersion(_ version: String) -> Bool {
        ClientUpdater.RootLayout.isSafeComponent(version) && !AssetManifest.reservedVersionNames.contains(version)
    }
}

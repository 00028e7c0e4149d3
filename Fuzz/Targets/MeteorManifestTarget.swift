import Foundation

@testable import MeteorHotCodePush

/// The Meteor asset manifest (`/__cordova/manifest.json`, unsigned: its fields become file
/// and folder names). Whatever is accepted must be safe to lay out on disk: a version that is
/// a usable folder name, URL paths that start with `/` and have no `..`, relative file paths
/// without `..`, no two different assets on one URL path, and index.html always present.
enum MeteorManifestTarget: FuzzTarget {
    static let name = "meteor-manifest"

    static func run(_ data: [UInt8]) {
        for platform in CompatPlatform.allCases {
            guard let manifest = try? AssetManifest.parse(Data(data), platform: platform) else { continue }
            check(manifest)
        }
    }

    static func check(_ manifest: AssetManifest) {
        let version = manifest.version
        guard !version.isEmpty, version != ".", version != "..", !version.contains("/"),
            !version.unicodeScalars.contains(where: { $0.value < 0x20 || $0 == "\\" || $0.value == 0x7F }),
            !AssetManifest.reservedVersionNames.contains(version)
        else { FuzzFinding.fail(name, "accepted version \(version.debugDescription) is not a safe folder name") }
        var seen: [[UInt8]: AssetManifest.Asset] = [:]
        for asset in manifest.assets {
            guard asset.urlPath.hasPrefix("/"), !hasDotDot(asset.urlPath) else {
                FuzzFinding.fail(name, "accepted URL path \(asset.urlPath.debugDescription)")
            }
            guard !asset.filePath.hasPrefix("/"), !hasDotDot(asset.filePath), !asset.filePath.contains("\0") else {
                FuzzFinding.fail(name, "accepted file path \(asset.filePath.debugDescription)")
            }
            // The same entry listed twice is allowed (Meteor lists files that way); two
            // different ones on one URL path are not.
            if let other = seen.updateValue(asset, forKey: Array(asset.urlPath.utf8)), other != asset {
                FuzzFinding.fail(name, "two different assets on URL path \(asset.urlPath.debugDescription)")
            }
        }
        guard manifest.assets.contains(where: \.isIndexPage) else { FuzzFinding.fail(name, "no index page") }
    }

    private static func hasDotDot(_ path: String) -> Bool {
        path.split(separator: "/", omittingEmptySubsequences: false).contains { $0 == ".." }
    }
}

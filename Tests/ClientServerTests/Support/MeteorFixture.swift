import ClientUpdater
import Foundation

/// The reference Meteor fixtures in `<package root>/../shared/fixtures/meteor`.
enum MeteorFixture {
    /// `…/shared/fixtures/meteor/bundled_www`, or nil when the shared folder is absent.
    static var bundledWWW: String? {
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let path = packageRoot.deletingLastPathComponent().appendingPathComponent("shared/fixtures/meteor/bundled_www").path
        return FileManager.default.fileExists(atPath: path + "/application/program.json") ? path : nil
    }

    static let skipMessage = "shared Meteor fixtures not found at <package root>/../shared/fixtures/meteor; skipping"

    /// The served assets of a Meteor bundle directory, read from its `program.json`
    /// (client entries by URL path, their source maps, and index.html at `/`).
    static func servedAssets(bundle: String) throws -> [ServedAsset] {
        let data = try Data(contentsOf: URL(fileURLWithPath: bundle + "/program.json"))
        guard let program = try JSONSerialization.jsonObject(with: data) as? [String: Any],
              let manifest = program["manifest"] as? [[String: Any]] else { throw CocoaError(.fileReadCorruptFile) }
        var assets = [ServedAsset(urlPath: "/", sourceFile: bundle + "/index.html", cacheable: false)]
        for entry in manifest where entry["where"] as? String == "client" {
            guard let url = entry["url"] as? String, let path = entry["path"] as? String else { continue }
            let urlPath = String(url.split(separator: "?", maxSplits: 1).first ?? "")
            assets.append(ServedAsset(urlPath: urlPath, sourceFile: bundle + "/" + path,
                                      cacheable: entry["cacheable"] as? Bool ?? false, hash: entry["hash"] as? String,
                                      sourceMapURLPath: entry["sourceMapUrl"] as? String, type: entry["type"] as? String))
            if let map = entry["sourceMap"] as? String, let mapURL = entry["sourceMapUrl"] as? String {
                assets.append(ServedAsset(urlPath: mapURL, sourceFile: bundle + "/" + map, cacheable: true, type: "json"))
            }
        }
        return assets
    }
}

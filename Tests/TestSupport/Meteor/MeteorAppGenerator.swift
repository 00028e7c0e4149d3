import ClientFoundation
import ClientUpdater
import Foundation

/// Writes synthetic Meteor apps: an embedded bundle (on-device layout, files at manifest
/// `path`) and downloadable versions (server layout, files at URL path, as the mock
/// serves them). Deterministic: the same arguments give the same bytes.
public enum MeteorAppGenerator {
    /// Shape of a generated app.
    public struct Spec: Sendable {
        /// Plain assets besides the one JS file (with its source map).
        public var assets: Int
        /// Bytes per plain asset.
        public var assetSize: Int
        /// How many plain assets each version after the first changes.
        public var changedPerVersion: Int
        public var appId: String
        public var rootURL: String
        /// Whether the JS file (and so its source map) changes in every version.
        public var scriptChanges: Bool
        public init(
            assets: Int = 5, assetSize: Int = 64, changedPerVersion: Int = 2,
            appId: String = "generatedappid", rootURL: String = "http://localhost:3000/", scriptChanges: Bool = true
        ) {
            self.scriptChanges = scriptChanges
            self.assets = assets
            self.assetSize = assetSize
            self.changedPerVersion = changedPerVersion
            self.appId = appId
            self.rootURL = rootURL
        }
    }

    public static let compatIOS = "0abe549f2adbcf6cd295428aefea628ebe69666a"
    public static let compatAndroid = "4017747ca6b4f460f33b121e439b7a11a070205a"

    /// One file of a version.
    public struct File: Sendable {
        public var path: String
        public var url: String
        public var bytes: Data
        public var type: String
        public var cacheable: Bool
        public var hash: String? { type == "map" ? nil : Digest.hex(.sha1, of: bytes) }
    }

    /// The files of version number `generation` (1 = the embedded one).
    public static func files(_ spec: Spec, generation: Int) -> [File] {
        let js = Data("console.log('app generation \(spec.scriptChanges ? generation : 1)');\n".utf8)
        let jsHash = Digest.hex(.sha1, of: js)
        var files = [
            File(path: "app/app.js", url: "/app/app.js?\(jsHash)", bytes: js, type: "js", cacheable: true),
            File(
                path: "app/app.js.map", url: "/app/\(jsHash).map",
                bytes: Data(#"{"version":3,"sources":["meteor://app/app.js"],"generation":\#(spec.scriptChanges ? generation : 1)}"#.utf8),
                type: "map", cacheable: true),
        ]
        for i in 0..<spec.assets {
            // Asset i last changed in the newest generation g ≤ generation that changes it.
            var changedIn = 1
            for g in stride(from: generation, through: 2, by: -1) {
                let first = ((g - 2) * spec.changedPerVersion) % max(spec.assets, 1)
                if (0..<spec.changedPerVersion).contains((i - first + spec.assets) % max(spec.assets, 1)) {
                    changedIn = g
                    break
                }
            }
            let head = "asset \(i) generation \(changedIn)\n"
            let body = head + String(repeating: "x", count: max(0, spec.assetSize - head.utf8.count))
            let folder = String(format: "d%02d", i / 100)
            files.append(
                File(
                    path: "app/assets/\(folder)/asset-\(i).txt", url: "/assets/\(folder)/asset-\(i).txt",
                    bytes: Data(body.utf8), type: "asset", cacheable: false))
        }
        return files
    }

    /// `program.json` / `manifest.json` text for a version.
    public static func manifest(_ spec: Spec, generation: Int, version: String) -> Data {
        var entries: [String] = []
        let files = files(spec, generation: generation)
        for file in files where file.type != "map" {
            var entry =
                #"{"path":"\#(file.path)","where":"client","type":"\#(file.type)","cacheable":\#(file.cacheable),"url":"\#(file.url)","size":\#(file.bytes.count),"hash":"\#(file.hash ?? "")""#
            if file.type == "js", let map = files.first(where: { $0.type == "map" }) {
                entry += #","sourceMap":"\#(map.path)","sourceMapUrl":"\#(map.url)""#
            }
            entries.append(entry + "}")
        }
        entries.append(#"{"path":"head.html","where":"internal","type":"head","hash":"2ce23f770b76d2f1cb0d71f4a43fbbb61afb25be"}"#)
        let text =
            #"{"format":"web-program-pre1","version":"\#(version)","cordovaCompatibilityVersions":{"android":"\#(compatAndroid)","ios":"\#(compatIOS)"},"manifest":[\#n  \#(entries.joined(separator: ",\n  "))\#n]}\#n"#
        return Data(text.utf8)
    }

    /// index.html with a runtime config the way the Meteor server writes it.
    public static func indexHTML(_ spec: Spec, version: String?, appId: String? = nil, rootURL: String? = nil) -> Data {
        var fields = [#""meteorRelease":"none""#]
        fields.append(#""ROOT_URL":"\#(rootURL ?? spec.rootURL)""#)
        if let version { fields.append(#""autoupdateVersionCordova":"\#(version)""#) }
        fields.append(#""appId":"\#(appId ?? spec.appId)""#)
        let json = "{" + fields.joined(separator: ",") + "}"
        let encoded = json.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-_.!~*'()"))) ?? ""
        return Data(
            """
            <!DOCTYPE html>
            <html>
            <head>
              <script type="text/javascript">
                __meteor_runtime_config__ = JSON.parse(decodeURIComponent("\(encoded)"));
              </script>
              <title>generated</title>
            </head>
            <body></body>
            </html>

            """.utf8)
    }

    /// Writes the embedded bundle (generation 1, version `version`) into `dir`.
    public static func writeEmbedded(_ spec: Spec, version: String, to dir: String) throws {
        try write(manifest(spec, generation: 1, version: version), dir + "/program.json")
        try write(indexHTML(spec, version: version), dir + "/index.html")
        for file in files(spec, generation: 1) { try write(file.bytes, dir + "/" + file.path) }
    }

    /// Writes a downloadable version (server layout) of generation `generation` into `dir`.
    public static func writeDownloadable(
        _ spec: Spec, generation: Int, version: String, to dir: String,
        index: Data? = nil
    ) throws {
        try write(manifest(spec, generation: generation, version: version), dir + "/manifest.json")
        try write(index ?? indexHTML(spec, version: version), dir + "/index.html")
        for file in files(spec, generation: generation) {
            let urlPath = String(file.url.split(separator: "?").first ?? "")
            try write(file.bytes, dir + urlPath)
        }
    }

    /// Writes `data` to `path`, creating parent folders.
    public static func write(_ data: Data, _ path: String) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try data.write(to: URL(fileURLWithPath: path))
    }
}

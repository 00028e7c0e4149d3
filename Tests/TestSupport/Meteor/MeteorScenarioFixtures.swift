import ClientFoundation
import ClientUpdater
import Foundation

/// The reference plugin's fixture set (docs/meteor.md#the-reference-test-suite), regenerated from logical
/// content in a ``MeteorShape``, in the same folder layout as `../shared/fixtures/meteor`:
/// `bundled_www/application` (the embedded bundle, on-device layout), one folder per
/// server state under `downloadable_versions/` (files at their URL paths, `manifest.json`
/// as advertised and, when the server's static files belong to another program, that
/// program as `program.json`), and `partially_downloaded_versions/version2`.
public struct MeteorScenarioFixtures: Sendable {
    public let shape: MeteorShape
    /// The folder holding the three subfolders.
    public let root: String

    public init(shape: MeteorShape, root: String) {
        self.shape = shape
        self.root = root
    }

    public var embedded: String { root + "/bundled_www/application" }
    /// The appId of every generated version's runtime config.
    public static let appId = "1generatedappid7q"
    /// `bundled_www/cordova_plugins.js`: a plain www file (Cordova's plugin list).
    static let cordovaPlugins = """
        cordova.define('cordova/plugin_list', function(require, exports, module) {
        module.exports = [];
        module.exports.metadata = {};
        });

        """
    public var versions: String { root + "/downloadable_versions" }
    public var partialVersion2: String { root + "/partially_downloaded_versions/version2" }

    /// The logical app of `version1`…`version3`: the template script and `some-file`
    /// change each time, `some-other-file` appears in version2.
    public static func content(_ generation: Int, version: String? = nil) -> MeteorAppContent {
        let template = "Template.body.addContent(function () { return 'generation \(generation)'; });"
        let ack = """
            document.addEventListener('DOMContentLoaded', function () {
              if (window.WebAppLocalServer) WebAppLocalServer.startupDidComplete(function () {
                document.getElementById('started').textContent = 'yes';
              });
            });
            """
        var publicFiles: [(String, Data)] = [
            ("some-file", Data((generation == 1 ? "some-file\n" : generation == 2 ? "some-file (changed)\n" : "some-file (changed again)\n").utf8)),
            ("some-text.txt", Data("some-text.txt\n".utf8)),
            ("some-data.json", Data("{\"some\":\"data\"}\n".utf8)),
        ]
        // One public file per content type the reference set serves (scenarios 16–26).
        for name in [
            "some-page.html", "some-javascript.js", "some-stylesheet.css", "some-image.png", "some-image.jpg", "some-video.mp4",
            "some-font.woff",
        ] {
            publicFiles.append((name, Data("\(name)\n".utf8)))
        }
        if generation >= 2 { publicFiles.append(("some-other-file", Data("some-other-file\n".utf8))) }
        return MeteorAppContent(
            version: version ?? "version\(generation)",
            scripts: [
                (
                    "packages/meteor.js",
                    "var Meteor = { isCordova: true }; var Template = { body: { addContent: function (f) { Template.body.content = f; } } };"
                ),
                ("app/template.mobileapp.js", template),
                ("app/mobileapp.js", ack),
            ],
            css: "body { color: #333; }\n", publicFiles: publicFiles)
    }

    /// Writes the whole set for `shape` into `root`.
    @discardableResult
    public static func write(_ shape: MeteorShape, to root: String) throws -> MeteorScenarioFixtures {
        let set = MeteorScenarioFixtures(shape: shape, root: root)
        let v1 = MeteorShapedApp.render(content(1), shape: shape)
        try writeOnDevice(v1, to: set.embedded)
        // As in the reference bundle: a www file beside the bundle, a file outside the manifest.
        try write(Data(cordovaPlugins.utf8), set.root + "/bundled_www/cordova_plugins.js")
        try write(Data("not-in-manifest\n".utf8), set.embedded + "/not-in-manifest")
        for g in 1...3 { try writeServer(MeteorShapedApp.render(content(g), shape: shape), to: set.versions + "/version\(g)") }
        let v2 = MeteorShapedApp.render(content(2), shape: shape)
        let script = set.changedScript(v2)

        // The server's static files lack the template script (another build behind it).
        try writeServer(v2, to: set.versions + "/version2_with_missing_asset", served: program(v2, dropping: script))
        try? FileManager.default.removeItem(atPath: set.versions + "/version2_with_missing_asset" + script)

        // The server has other bytes at the template script's URL: for the current shape a
        // program whose entry there names another hash; for the legacy shape other bytes.
        let invalid = set.versions + "/version2_with_invalid_asset"
        try writeServer(v2, to: invalid)
        let wrong = Data("console.log('not the bytes the manifest names');\n".utf8)
        try write(wrong, invalid + script)
        if shape == .current, let entry = v2.file(at: script)?.hash {
            let other = MeteorHashing.fileHash(inputHash: nil, sri: MeteorHashing.sri(wrong))
            try write(
                Data(
                    String(decoding: v2.manifest, as: UTF8.self).replacingOccurrences(of: "\"hash\":\"\(entry)\"", with: "\"hash\":\"\(other)\"").utf8
                ), invalid + "/program.json")
        }

        var mismatch = content(2)
        mismatch.pageVersion = "version3"
        try writeServer(MeteorShapedApp.render(mismatch, shape: shape), to: set.versions + "/version2_with_version_mismatch")
        var variants: [(String, (inout MeteorAppContent) -> Void)] = [
            ("missing_root_url", { $0.rootURL = nil }),
            ("missing_app_id", { $0.appId = nil }),
            ("wrong_app_id", { $0.appId = "wrongappid" }),
            ("missing_cordova_compatibility_version", { $0.compatibility = nil }),
            ("different_cordova_compatibility_version", { $0.compatibility = ("differentios", "differentandroid") }),
            ("127.0.0.1_root_url", { $0.rootURL = "http://127.0.0.1:3000/" }),
            ("wrong_root_url", { $0.rootURL = "http://localhost:3000/" }),
        ]
        variants.append(("version2_settings", { $0.publicSettings = #"{"greeting":"hello"}"# }))
        for (name, change) in variants {
            var c = content(2, version: name)
            change(&c)
            try writeServer(MeteorShapedApp.render(c, shape: shape), to: set.versions + "/" + name)
        }

        // What an interrupted download of version2 leaves: the manifest, index.html and the
        // two public files, each recorded (SHA-256) as our download records what it stores.
        let partial = set.partialVersion2
        try write(v2.manifest, partial + "/program.json")
        try write(v2.indexHTML, partial + "/index.html")
        var record = ""
        for name in ["some-file", "some-other-file"] {
            guard let file = v2.files.first(where: { $0.path == "app/\(name)" }) else { continue }
            try write(file.bytes, partial + "/" + file.path)
            record += "\(Digest.hex(.sha256, of: file.bytes)) \(file.path)\n"
        }
        if shape == .current { try write(Data(record.utf8), partial + "/.clientctl-integrity") }
        return set
    }

    /// URL path of the script that changes between versions (legacy: the template file;
    /// current: the whole production bundle).
    public func changedScript(_ v: MeteorRenderedVersion) -> String {
        shape == .legacy ? "/app/template.mobileapp.js" : (v.files.first { $0.type == "js" }?.urlPath ?? "")
    }

    /// The URL paths a device fetches when the script changes: the script, its source map
    /// and (current shape) its `.stats.json`.
    public func changedScriptDownloads(_ name: String) throws -> [String] {
        let v = try rendered(name)
        let script = changedScript(v)
        var result = [script]
        if shape == .current {
            let hash = (script as NSString).lastPathComponent.replacingOccurrences(of: ".js", with: "")
            result += ["/__cordova/\(hash).map", "/__cordova/\(hash).stats.json"]
        } else if let hash = v.file(at: script)?.hash {
            result.append("/app/\(hash).map")
        }
        return result
    }

    /// The URL path a device downloads a public file by: the first listed of its entries.
    public func publicURL(_ name: String) -> String { shape == .current ? "/__cordova/\(name)" : "/\(name)" }

    /// The rendering of a logical version `version1`…`version3`.
    public func rendered(_ name: String) throws -> MeteorRenderedVersion {
        guard name.hasPrefix("version"), let g = Int(name.dropFirst("version".count)) else { throw HarnessFixtureError(name) }
        return MeteorShapedApp.render(Self.content(g), shape: shape)
    }

    /// Writes an on-device bundle (files at manifest `path`, `program.json`, index.html).
    public static func writeOnDevice(_ v: MeteorRenderedVersion, to dir: String) throws {
        try write(v.manifest, dir + "/program.json")
        try write(v.indexHTML, dir + "/index.html")
        for file in v.files { try write(file.bytes, dir + "/" + file.path) }
    }

    /// Writes a server folder: files at their URL paths, `manifest.json`, index.html and,
    /// when given, the program the static files come from as `program.json`.
    public static func writeServer(_ v: MeteorRenderedVersion, to dir: String, served: Data? = nil) throws {
        try write(v.manifest, dir + "/manifest.json")
        try write(v.indexHTML, dir + "/index.html")
        if let served { try write(served, dir + "/program.json") }
        for file in v.files { try write(file.bytes, dir + file.urlPath) }
    }

    /// `v`'s manifest without the entry whose URL path is `urlPath` (a server program
    /// that does not have that file).
    static func program(_ v: MeteorRenderedVersion, dropping urlPath: String) -> Data {
        guard let object = try? JSONSerialization.jsonObject(with: v.manifest) as? [String: Any],
            let entries = object["manifest"] as? [[String: Any]]
        else { return v.manifest }
        var copy = object
        copy["manifest"] = entries.filter { ($0["url"] as? String)?.split(separator: "?").first.map(String.init) != urlPath }
        return (try? JSONSerialization.data(withJSONObject: copy)) ?? v.manifest
    }

    static func write(_ data: Data, _ path: String) throws { try MeteorAppGenerator.write(data, path) }
}

/// A fixture name the set does not know.
public struct HarnessFixtureError: Error, CustomStringConvertible {
    public let description: String
    init(_ name: String) { description = "no generated fixture named \(name)" }
}

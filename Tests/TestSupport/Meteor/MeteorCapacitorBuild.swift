import ClientFoundation
import Foundation

/// What Meteor's own Capacitor integration (`@meteorjs/capacitor`, meteor/meteor PR #14633,
/// packages/capacitor/) makes of a web.cordova build when it writes the Capacitor webDir,
/// re-stated from reading its source (no code is taken from it; the rules and the files
/// they come from are listed in Fixtures/meteor/capacitor/README.md):
///
/// - lib/transforms.js `syncBundleFiles`: the web.cordova program folder is copied as it
///   is (files at their manifest `path`), without `head.html` and `body.html`, and without
///   `program.json` unless `hcp` is `webapp` (lib/constants.js `getCapacitorExcludedFiles`).
/// - lib/web-program.js `normalizeWebProgramAssetUrls`: every `url` and `sourceMapUrl` that
///   starts with `/__cordova/` loses that prefix (`/__cordova/x` becomes `/x`).
/// - lib/web-program.js `normalizeWebProgramVersions`: each missing `version*` field becomes
///   `AUTOUPDATE_VERSION` when the build's environment has it, else a SHA-1 over
///   `JSON.stringify({})` and the `path` and `hash` of every `client` or `internal` entry
///   its filter admits (the server hashes `{"PUBLIC_SETTINGS":…}` instead:
///   packages/webapp/webapp_server.js, packages/webapp-hashing/webapp-hashing.js).
/// - lib/transforms.js `buildIndex` and `patchCordovaIndexHtml`: index.html is the
///   web.cordova boilerplate over the normalized program, with a runtime config of its
///   own (`meteorRelease: "none"`, ROOT_URL, DDP_DEFAULT_CONNECTION_URL, the normalized
///   versions under `autoupdate.versions["web.cordova"]`, appId, meteorEnv; no
///   PUBLIC_SETTINGS), a `WebAppLocalServer` script right after `<head>` (a bridge to the
///   native plugin for `webapp`, a no-op stub for `none`), and every `__cordova/` removed.
public enum MeteorCapacitorBuild {
    /// `meteor.capacitor.hcp` in the app's package.json (lib/config.js; `true` means
    /// `webapp`, `false` means `none`, the default is `webapp`).
    public enum HCPMode: String, Sendable {
        /// Hot code push through the native plugin: `program.json` ships in the webDir.
        case webapp
        /// No hot code push: `program.json` is left out.
        case none
    }

    /// The build's settings.
    public struct Options: Sendable {
        /// `meteor.capacitor.hcp`.
        public var hcp: HCPMode = .webapp
        /// `AUTOUPDATE_VERSION` in the build's environment; `nil` when unset.
        public var autoupdateVersion: String?
        /// MOBILE_ROOT_URL (or ROOT_URL) at build time.
        public var rootURL = "http://localhost:3000/"
        /// `.meteor/.id` (or APP_ID).
        public var appId = MeteorScenarioFixtures.appId

        public init(hcp: HCPMode = .webapp, autoupdateVersion: String? = nil) {
            self.hcp = hcp
            self.autoupdateVersion = autoupdateVersion
        }
    }

    /// The four version fields of a program.
    public struct Versions: Sendable, Equatable {
        public var version: String
        public var refreshable: String
        public var nonRefreshable: String
        public var replaceable: String
    }

    /// The text the builds put right after `<head>`: stand-ins for the bridge and the stub of
    /// lib/constants.js (marked as such; the page's own `startupDidComplete` call still finds
    /// a `WebAppLocalServer`).
    static let bridge =
        #"<script type="text/javascript">/* @meteorjs/capacitor WebAppLocalServer bridge (test stand-in) */ window.WebAppLocalServer = window.WebAppLocalServer || { startupDidComplete: function (c) { if (c) c(); } };</script>"#
    static let stub =
        #"<script type="text/javascript">/* @meteorjs/capacitor WebAppLocalServer stub, hcp none (test stand-in) */ var WebAppLocalServer = { startupDidComplete: function (c) { if (c) c(); }, checkForUpdates: function (c) { if (c) c(); } };</script>"#

    /// Writes the webDir the Capacitor build makes of `rendered` (a ``MeteorShape/current``
    /// rendering: its manifest entries are those of the web.cordova `program.json`).
    /// - Returns: the versions the seed's program.json (and page) carry.
    @discardableResult
    public static func writeSeed(_ rendered: MeteorRenderedVersion, options: Options = Options(), to dir: String) throws -> Versions {
        guard let object = try JSONSerialization.jsonObject(with: rendered.manifest) as? [String: Any],
            let entries = object["manifest"] as? [[String: Any]]
        else { throw HarnessError("not a manifest: version \(rendered.version)") }
        // The program.json bundler.js writes for web.cordova: format, manifest, compatibility
        // versions; the version fields are the server's to compute, so the build has none.
        let normalized = entries.map { entry in
            var e = entry
            for key in ["url", "sourceMapUrl"] {
                if let value = e[key] as? String, value.hasPrefix("/__cordova/") { e[key] = "/" + value.dropFirst("/__cordova/".count) }
            }
            return e
        }
        let versions = Self.versions(normalized, runtimeConfigJSON: "{}", autoupdateVersion: options.autoupdateVersion)
        var program: [String: Any] = ["format": "web-program-pre1", "manifest": normalized]
        program["cordovaCompatibilityVersions"] = object["cordovaCompatibilityVersions"]
        program["version"] = versions.version
        program["versionRefreshable"] = versions.refreshable
        program["versionNonRefreshable"] = versions.nonRefreshable
        program["versionReplaceable"] = versions.replaceable
        if options.hcp == .webapp {
            let data = try JSONSerialization.data(withJSONObject: program, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
            try MeteorAppGenerator.write(data, dir + "/program.json")
        }
        try MeteorAppGenerator.write(indexHTML(normalized, versions: versions, options: options), dir + "/index.html")
        for file in rendered.files { try MeteorAppGenerator.write(file.bytes, dir + "/" + file.path) }
        return versions
    }

    /// web-program.js's and webapp-hashing.js's rule: SHA-1 over the runtime config JSON,
    /// then `path` and `hash` of each `client` or `internal` entry the filter admits;
    /// `AUTOUPDATE_VERSION` instead when it is set.
    public static func versions(_ entries: [[String: Any]], runtimeConfigJSON: String, autoupdateVersion: String? = nil) -> Versions {
        func hash(_ admit: (String, Bool) -> Bool) -> String {
            if let autoupdateVersion { return autoupdateVersion }
            let d = Digest(.sha1)
            d.update(Data(runtimeConfigJSON.utf8))
            for e in entries where ["client", "internal"].contains(e["where"] as? String ?? "") {
                guard admit(e["type"] as? String ?? "", e["replaceable"] as? Bool ?? false) else { continue }
                d.update(Data((e["path"] as? String ?? "").utf8))
                d.update(Data((e["hash"] as? String ?? "").utf8))
            }
            return d.finalizeHex()
        }
        return Versions(
            version: hash { _, _ in true }, refreshable: hash { type, _ in type == "css" },
            nonRefreshable: hash { type, replaceable in type != "css" && !replaceable }, replaceable: hash { _, replaceable in replaceable })
    }

    /// The `version` a Meteor 3 server advertises for `rendered`'s program when
    /// `AUTOUPDATE_VERSION` is unset: the same rule over `{"PUBLIC_SETTINGS":…}`
    /// (webapp_server.js `configOverrides`; server_environment.js makes the settings at
    /// least `{}`).
    public static func serverVersion(_ rendered: MeteorRenderedVersion, publicSettings: String) throws -> String {
        guard let object = try JSONSerialization.jsonObject(with: rendered.manifest) as? [String: Any],
            let entries = object["manifest"] as? [[String: Any]]
        else { throw HarnessError("not a manifest: version \(rendered.version)") }
        return versions(entries, runtimeConfigJSON: #"{"PUBLIC_SETTINGS":\#(publicSettings)}"#).version
    }

    /// `content` rendered in the current shape under the version a Meteor 3 server computes
    /// for it (its page carries that version too).
    public static func served(_ content: MeteorAppContent) throws -> MeteorRenderedVersion {
        var c = content
        c.version = try serverVersion(MeteorShapedApp.render(content, shape: .current), publicSettings: content.publicSettings)
        return MeteorShapedApp.render(c, shape: .current)
    }

    /// buildIndex + patchCordovaIndexHtml: the web.cordova boilerplate (as
    /// ``MeteorShapedApp/indexHTML(_:shape:files:)`` renders it) over the normalized entries,
    /// with the build's runtime config, the `WebAppLocalServer` script after `<head>`, and
    /// no `__cordova/` left.
    static func indexHTML(_ entries: [[String: Any]], versions: Versions, options: Options) -> Data {
        let v = versions
        let config =
            #"{"meteorRelease":"none","ROOT_URL":\#(MeteorShapedApp.json(options.rootURL)),"ROOT_URL_PATH_PREFIX":"","DDP_DEFAULT_CONNECTION_URL":\#(MeteorShapedApp.json(options.rootURL)),"autoupdate":{"versions":{"web.cordova":{"version":\#(MeteorShapedApp.json(v.version)),"versionRefreshable":\#(MeteorShapedApp.json(v.refreshable)),"versionNonRefreshable":\#(MeteorShapedApp.json(v.nonRefreshable)),"versionReplaceable":\#(MeteorShapedApp.json(v.replaceable))}}},"appId":\#(MeteorShapedApp.json(options.appId)),"meteorEnv":{"NODE_ENV":"production","TEST_METADATA":"{}"}}"#
        let encoded = config.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-_.!~*'()"))) ?? ""
        let client = entries.filter { $0["where"] as? String == "client" }
        let css = client.filter { $0["type"] as? String == "css" }.compactMap { $0["url"] as? String }
        let js = client.filter { $0["type"] as? String == "js" }.compactMap { $0["url"] as? String }
        var lines = ["<html>", "<head>", "  " + (options.hcp == .webapp ? bridge : stub), "  <meta charset=\"utf-8\">"]
        lines += css.map { "  <link rel=\"stylesheet\" type=\"text/css\" class=\"__meteor-css__\" href=\"\($0)\">" }
        lines += [
            "<title>generated meteor app</title>", "  <script type=\"text/javascript\">",
            "    __meteor_runtime_config__ = JSON.parse(decodeURIComponent(\"\(encoded)\"));", "  </script>", "",
            "  <script type=\"text/javascript\" src=\"/cordova.js\"></script>",
        ]
        lines += js.map { "  <script type=\"text/javascript\" src=\"\($0)\"></script>" }
        lines += ["", "</head>", "", "<body>", "<p id=\"started\">no</p>", "</body>\n</html>"]
        return Data(lines.joined(separator: "\n").replacingOccurrences(of: "__cordova/", with: "").utf8)
    }
}

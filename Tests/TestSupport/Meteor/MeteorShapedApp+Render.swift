import ClientUpdater
import Foundation

/// Lays out a ``MeteorAppContent`` the way a Meteor server of a given ``MeteorShape``
/// publishes it for web.cordova: manifest entries, served bytes, boilerplate index.html.
/// Written from reading meteor/meteor release-3.1.0 (tools/isobuild/bundler.js,
/// packages/webapp/webapp_server.js, packages/boilerplate-generator/template-web.cordova.js,
/// packages/autoupdate/autoupdate_server.js); no code is taken from it.
public enum MeteorShapedApp {
    /// Renders `content` in `shape`.
    /// - Parameter appendSourceMapLine: append `//# sourceMappingURL=…` to served JS after
    ///   the manifest `size` was taken, as bundler.js `writeFile` did with `sourceMapUrl`
    ///   (the size then understates the served bytes).
    public static func render(
        _ content: MeteorAppContent, shape: MeteorShape,
        appendSourceMapLine: Bool = false
    ) -> MeteorRenderedVersion {
        var entries: [String] = []
        var files: [MeteorServedFile] = []
        func entry(_ f: MeteorServedFile, url: String, cacheable: Bool, sri: String?, map: (path: String, url: String)?) -> String {
            var e = #"{"path":\#(json(f.path)),"where":"client","type":\#(json(f.type)),"cacheable":\#(cacheable),"url":\#(json(url))"#
            if shape == .current { e += #","replaceable":false"# }
            if let map { e += #","sourceMap":\#(json(map.path)),"sourceMapUrl":\#(json(map.url))"# }
            e += #","size":\#(f.bytes.count),"hash":\#(json(f.hash ?? ""))"#
            if shape == .current { e += #","sri":\#(sri.map(json) ?? "null")"# }
            return e + "}"
        }
        func served(_ f: MeteorServedFile) -> MeteorServedFile {
            guard appendSourceMapLine, f.type == "js" else { return f }
            var g = f
            g.bytes += Data("\n//# sourceMappingURL=http://localhost:3000\(f.urlPath.replacingOccurrences(of: ".js", with: ".map"))\n".utf8)
            return g
        }
        let mapPrefix = shape == .current ? Data(")]}'\n".utf8) : Data()
        switch shape {
        case .current:
            // Production build: one minified bundle named by its hash (setUrlToHash) and its
            // bundle-size .stats.json (type "json", cacheable), one merged CSS file.
            let bundle = Data(content.scripts.map { "/* \($0.name) */\n\($0.source)\n" }.joined().utf8)
            let sri = MeteorHashing.sri(bundle)
            let hash = MeteorHashing.fileHash(inputHash: MeteorHashing.sha1(Data(content.scripts.map(\.source).joined().utf8)), sri: sri)
            let js = MeteorServedFile(urlPath: "/__cordova/\(hash).js", path: "\(hash).js", bytes: bundle, hash: hash, type: "js")
            let map = MeteorServedFile(
                urlPath: "/__cordova/\(hash).map", path: "\(hash).js.map",
                bytes: mapPrefix
                    + Data(
                        #"{"version":3,"sources":[\#(content.scripts.map { json("meteor://💻app/" + $0.name) }.joined(separator: ","))],"mappings":""}"#
                            .utf8),
                hash: nil, type: "map")
            entries.append(entry(js, url: js.urlPath + "?meteor_js_resource=true", cacheable: true, sri: sri, map: (map.path, map.urlPath)))
            files += [served(js), map]
            let stats = Data(
                "{\n  \"minifier\": {\n    \"name\": \"standard-minifier-js\",\n    \"version\": \"3.0.0\"\n  },\n  \"totalMinifiedBytes\": \(bundle.count)\n}\n"
                    .utf8)
            let statsSRI = MeteorHashing.sri(stats)
            let statsFile = MeteorServedFile(
                urlPath: "/__cordova/\(hash).stats.json", path: "\(hash).stats.json", bytes: stats,
                hash: MeteorHashing.fileHash(inputHash: nil, sri: statsSRI), type: "json")
            entries.append(entry(statsFile, url: statsFile.urlPath + "?meteor_js_resource=true", cacheable: true, sri: statsSRI, map: nil))
            files.append(statsFile)
            let cssBytes = Data(content.css.utf8)
            let cssSRI = MeteorHashing.sri(cssBytes)
            let cssHash = MeteorHashing.fileHash(inputHash: MeteorHashing.sha1(cssBytes), sri: cssSRI)
            let css = MeteorServedFile(urlPath: "/__cordova/\(cssHash).css", path: "\(cssHash).css", bytes: cssBytes, hash: cssHash, type: "css")
            let cssMap = MeteorServedFile(
                urlPath: "/__cordova/\(cssHash).map", path: "\(cssHash).css.map",
                bytes: mapPrefix + Data(#"{"version":3,"sources":["meteor://💻app/client/main.css"],"mappings":""}"#.utf8), hash: nil, type: "map")
            entries.append(
                entry(css, url: css.urlPath + "?meteor_css_resource=true", cacheable: true, sri: cssSRI, map: (cssMap.path, cssMap.urlPath)))
            files += [css, cssMap]
            // public/: the resource's own hash as input, no SRI; listed with and without
            // the /__cordova prefix, both at one `path` (bundler.js, "add another resource
            // for this asset without the prefix").
            for (name, bytes) in content.publicFiles {
                let hash = MeteorHashing.fileHash(inputHash: MeteorHashing.sha1(bytes), sri: nil)
                for urlPath in ["/__cordova/\(name)", "/\(name)"] {
                    let f = MeteorServedFile(urlPath: urlPath, path: "app/\(name)", bytes: bytes, hash: hash, type: "asset")
                    entries.append(entry(f, url: urlPath, cacheable: false, sri: nil, map: nil))
                    files.append(f)
                }
            }
        case .legacy:
            for (name, source) in content.scripts {
                let bytes = Data(source.utf8)
                let hash = MeteorHashing.sha1(bytes)
                let dir = (name as NSString).deletingLastPathComponent
                let js = MeteorServedFile(urlPath: "/\(name)", path: name, bytes: bytes, hash: hash, type: "js")
                let map = MeteorServedFile(
                    urlPath: (dir.isEmpty ? "" : "/" + dir) + "/\(hash).map", path: name + ".map",
                    bytes: Data(#"{"version":3,"sources":[\#(json(name))],"mappings":""}"#.utf8), hash: nil, type: "map")
                entries.append(entry(js, url: "/\(name)?\(hash)", cacheable: true, sri: nil, map: (map.path, map.urlPath)))
                files += [served(js), map]
            }
            let cssBytes = Data(content.css.utf8)
            let cssHash = MeteorHashing.sha1(cssBytes)
            let css = MeteorServedFile(
                urlPath: "/merged-stylesheets.css", path: "merged-stylesheets.css", bytes: cssBytes, hash: cssHash, type: "css")
            let cssMap = MeteorServedFile(
                urlPath: "/\(cssHash).map", path: "merged-stylesheets.css.map",
                bytes: Data(#"{"version":3,"sources":["client/main.css"],"mappings":""}"#.utf8), hash: nil, type: "map")
            entries.append(entry(css, url: "/merged-stylesheets.css?\(cssHash)", cacheable: true, sri: nil, map: (cssMap.path, cssMap.urlPath)))
            files += [css, cssMap]
            for (name, bytes) in content.publicFiles {
                let f = MeteorServedFile(urlPath: "/\(name)", path: "app/\(name)", bytes: bytes, hash: MeteorHashing.sha1(bytes), type: "asset")
                entries.append(entry(f, url: f.urlPath, cacheable: false, sri: nil, map: nil))
                files.append(f)
            }
        }
        entries.append(#"{"path":"head.html","where":"internal","type":"head","hash":"\#(MeteorHashing.sha1(Data("head".utf8)))"}"#)
        let manifest = manifestText(content, shape: shape, entries: entries, files: files)
        return MeteorRenderedVersion(
            shape: shape, version: content.version, manifest: Data(manifest.utf8),
            indexHTML: indexHTML(content, shape: shape, files: files), files: files)
    }

    /// `/__cordova/manifest.json` as webapp_server.js writes it (`JSON.stringify(newProgram)`:
    /// format, manifest, version, versionRefreshable, versionNonRefreshable,
    /// versionReplaceable, cordovaCompatibilityVersions, PUBLIC_SETTINGS), or the legacy
    /// program.json shape.
    static func manifestText(_ content: MeteorAppContent, shape: MeteorShape, entries: [String], files: [MeteorServedFile]) -> String {
        let compat = content.compatibility.map { #","cordovaCompatibilityVersions":{"android":\#(json($0.android)),"ios":\#(json($0.ios))}"# } ?? ""
        let list = "[" + entries.joined(separator: ",") + "]"
        guard shape == .current else {
            return #"{"format":"web-program-pre1","version":\#(json(content.version))\#(compat),"manifest":\#(list)}"#
        }
        let v = versions(content, files: files)
        return
            #"{"format":"web-program-pre1","manifest":\#(list),"version":\#(json(content.version)),"versionRefreshable":\#(json(v.refreshable)),"versionNonRefreshable":\#(json(v.nonRefreshable)),"versionReplaceable":\#(json(v.replaceable))\#(compat),"PUBLIC_SETTINGS":\#(content.publicSettings)}"#
    }

    /// Stand-ins for WebAppHashing's per-kind versions: CSS-only, non-CSS, replaceable.
    static func versions(_ content: MeteorAppContent, files: [MeteorServedFile]) -> (refreshable: String, nonRefreshable: String, replaceable: String)
    {
        func h(_ filter: (MeteorServedFile) -> Bool) -> String {
            MeteorHashing.sha1(Data((files.filter(filter).compactMap(\.hash).joined(separator: ",") + content.publicSettings).utf8))
        }
        return (h { $0.type == "css" }, h { $0.type != "css" }, h { _ in false })
    }

    /// The boilerplate index.html (template-web.cordova.js): CSS links, the runtime config
    /// as `JSON.parse(decodeURIComponent("…"))`, `/cordova.js`, then one `<script src>` per
    /// manifest `js` entry at its manifest URL.
    public static func indexHTML(_ content: MeteorAppContent, shape: MeteorShape, files: [MeteorServedFile]) -> Data {
        var config: [String] = [#""meteorRelease":\#(json(shape == .current ? "METEOR@3.1" : "METEOR@1.2.1"))"#]
        if shape == .current { config.append(#""PUBLIC_SETTINGS":\#(content.publicSettings)"#) }
        if let root = content.rootURL { config.append(#""ROOT_URL":\#(json(root))"#) }
        config.append(#""ROOT_URL_PATH_PREFIX":"""#)
        let pageVersion = content.pageVersion ?? content.version
        if shape == .current {
            let v = versions(content, files: files)
            config.append(
                #""autoupdate":{"versions":{"web.cordova":{"version":\#(json(pageVersion)),"versionRefreshable":\#(json(v.refreshable)),"versionNonRefreshable":\#(json(v.nonRefreshable)),"versionReplaceable":\#(json(v.replaceable))}}}"#
            )
        } else {
            config.append(#""autoupdateVersionCordova":\#(json(pageVersion))"#)
        }
        if let appId = content.appId { config.append(#""appId":\#(json(appId))"#) }
        let encoded =
            ("{" + config.joined(separator: ",") + "}")
            .addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-_.!~*'()"))) ?? ""
        let cssURLs = files.filter { $0.type == "css" }.map { shape == .current ? $0.urlPath + "?meteor_css_resource=true" : $0.urlPath }
        let jsURLs = files.filter { $0.type == "js" }.map { shape == .current ? $0.urlPath + "?meteor_js_resource=true" : $0.urlPath }
        var lines = ["<html>", "<head>", "  <meta charset=\"utf-8\">"]
        lines += cssURLs.map { "  <link rel=\"stylesheet\" type=\"text/css\" class=\"__meteor-css__\" href=\"\($0)\">" }
        lines += [
            "<title>generated meteor app</title>", "  <script type=\"text/javascript\">",
            "    __meteor_runtime_config__ = JSON.parse(decodeURIComponent(\"\(encoded)\"));", "  </script>", "",
            "  <script type=\"text/javascript\" src=\"/cordova.js\"></script>",
        ]
        lines += jsURLs.map { "  <script type=\"text/javascript\" src=\"\($0)\"></script>" }
        lines += ["", "</head>", "", "<body>", "<p id=\"started\">no</p>", "</body>\n</html>"]
        return Data(lines.joined(separator: "\n").utf8)
    }

    /// A JSON string literal.
    static func json(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case _ where u.value < 0x20: out += String(format: "\\u%04x", u.value)
            default: out.unicodeScalars.append(u)
            }
        }
        return out + "\""
    }
}

import Foundation
import Synchronization

extension MeteorMockServer {
    /// One answer of a Meteor server for `folder` (a server layout written by
    /// ``MeteorScenarioFixtures/writeServer(_:to:served:)``), following
    /// packages/webapp/webapp_server.js (meteor/meteor release-3.1.0):
    ///
    /// - `WebApp.categorizeRequest`: a first path segment `__cordova` selects web.cordova
    ///   and is removed; `getStaticFileInfo` then looks up the original path, then the
    ///   stripped one, among the program's static files (keyed by manifest `url` pathname,
    ///   plus each `sourceMapUrl`, plus `/__cordova/manifest.json`).
    /// - Static files: `ETag: "<manifest hash>"` when the entry has a hash; source maps have
    ///   none, so `send` adds its weak `W/"<size>-<mtime>"`; cacheable files get
    ///   `Vary: User-Agent` and a one-year max-age; Content-Type by manifest type. A listed
    ///   file missing on disk makes `send` fail: 500.
    /// - `/__cordova/manifest.json`: the advertised program, `ETag: "<version>"`.
    /// - Anything else: with `meteor_dont_serve_index` (or `meteor_js_resource`) an
    ///   uncached 404, else the boilerplate index.html, streamed (chunked) without an ETag.
    ///
    /// The static files come from `program.json` when the folder has one (the program the
    /// server actually runs differs from the advertised one), else from `manifest.json`.
    static func webappAnswer(folder: String, path: String, query: String?) -> MockResponse {
        var parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count > 1, parts[1] == "__cordova" else { return MockResponse(status: 404, body: Data("404 Not Found".utf8)) }
        parts.remove(at: 1)
        let stripped = parts.joined(separator: "/")
        if path == "/__cordova/manifest.json", let data = FileManager.default.contents(atPath: folder + "/manifest.json") {
            let version = ((try? JSONSerialization.jsonObject(with: data)) as? [String: Any])?["version"] as? String ?? ""
            return MockResponse(status: 200, headers: ["etag": "\"\(version)\"", "content-type": "application/json; charset=UTF-8"], body: data)
        }
        let table = tables.table(folder: folder)
        if let info = table[path] ?? table[stripped] {
            guard let data = FileManager.default.contents(atPath: folder + info.pathname) else { return MockResponse(status: 500) }
            var headers: [String: String] = [:]
            if info.cacheable {
                headers["vary"] = "User-Agent"
                headers["cache-control"] = "public, max-age=31536000"
            }
            switch info.type {
            case "js": headers["content-type"] = "application/javascript; charset=UTF-8"
            case "css": headers["content-type"] = "text/css; charset=UTF-8"
            case "json": headers["content-type"] = "application/json; charset=UTF-8"
            default: headers["content-type"] = "application/octet-stream"
            }
            headers["etag"] = info.hash.map { "\"\($0)\"" } ?? "W/\"\(String(data.count, radix: 16))-18c3a0f1e20\""
            return MockResponse(status: 200, headers: headers, body: data)
        }
        let query = query ?? ""
        if query.contains("meteor_dont_serve_index") || query.contains("meteor_js_resource") {
            return MockResponse(status: 404, headers: ["cache-control": "no-cache"], body: Data("404 Not Found".utf8))
        }
        let index = FileManager.default.contents(atPath: folder + "/index.html") ?? Data()
        return MockResponse(status: 200, headers: ["content-type": "text/html; charset=utf-8", "transfer-encoding": "chunked"], body: index)
    }

    /// What `getStaticFileInfo` knows about one URL path.
    struct StaticFile {
        var pathname: String
        var hash: String?
        var type: String?
        var cacheable: Bool
    }

    /// Each folder's static files, read once (a folder is written before it is served).
    static let tables = StaticFileTables()

    /// The static files of the folder's program, keyed by URL pathname.
    static func staticFiles(folder: String) -> [String: StaticFile] {
        let data = FileManager.default.contents(atPath: folder + "/program.json") ?? FileManager.default.contents(atPath: folder + "/manifest.json")
        guard let data, let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
            let manifest = object["manifest"] as? [[String: Any]]
        else { return [:] }
        var table: [String: StaticFile] = [:]
        for item in manifest where item["where"] as? String == "client" {
            guard let url = item["url"] as? String, let pathname = url.split(separator: "?").first.map(String.init) else { continue }
            table[pathname] = StaticFile(
                pathname: pathname, hash: item["hash"] as? String, type: item["type"] as? String,
                cacheable: item["cacheable"] as? Bool ?? false)
            if item["sourceMap"] is String, let mapURL = item["sourceMapUrl"] as? String,
                let mapPath = mapURL.split(separator: "?").first.map(String.init)
            {
                table[mapPath] = StaticFile(pathname: mapPath, hash: nil, type: nil, cacheable: true)
            }
        }
        return table
    }

    /// `body` in HTTP/1.1 chunked transfer coding, in chunks of at most 512 bytes.
    public static func chunked(_ body: Data) -> Data {
        var out = Data()
        var offset = body.startIndex
        while offset < body.endIndex {
            let end = min(offset + 512, body.endIndex)
            out += Data(String(end - offset, radix: 16).utf8) + Data("\r\n".utf8) + body[offset..<end] + Data("\r\n".utf8)
            offset = end
        }
        return out + Data("0\r\n\r\n".utf8)
    }
}

/// A cache of ``MeteorMockServer/staticFiles(folder:)`` per folder.
final class StaticFileTables: Sendable {
    private let cache = Mutex<[String: [String: MeteorMockServer.StaticFile]]>([:])

    func table(folder: String) -> [String: MeteorMockServer.StaticFile] {
        if let hit = cache.withLock({ $0[folder] }) { return hit }
        let table = MeteorMockServer.staticFiles(folder: folder)
        cache.withLock { $0[folder] = table }
        return table
    }
}

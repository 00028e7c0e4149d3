import ClientServer
import ClientShim
import ClientUpdater
import Foundation
import TestSupport
import Testing

/// Scenarios 2–26 of docs/meteor.md#the-reference-test-suite (the Cordova plugin's test suite) against the
/// server over real HTTP, serving a `bundled_www` organized by the organizer: generated in
/// the legacy shape (the reference's era), and the reference one under
/// `Scripts/meteor-reference-replay`.
@Suite struct MeteorServingTests {
    static let sources = MeteorFixtureSource.legacyAndReference

    /// Organizes the bundled version of `fixtures` and runs `body` against a live server for it.
    func withBundledServer(
        _ fixtures: MeteorFixtureFolder, csp: String? = nil, _ body: @Sendable (Int) async throws -> Void
    ) async throws {
        let www = fixtures.bundledWWW
        let root = try TemporaryDirectory("meteor-serve")
        let layout = RootLayout(root: root.path)
        let (id, assets) = try MeteorFixture.embeddedAssets(www: www, layout: layout)
        #expect(id == "version1")
        try Organizer(layout: layout).organize(id: id, assets: assets)
        let server = try ClientServer(configuration: ServerHarness.configuration(www: www, csp: csp), logger: ServerHarness.quietLogger)
        try server.activate(servingDirectory: try #require(layout.servingDirectory("version1")))
        try await ServerHarness.withServer(server, body)
        withExtendedLifetime((root, fixtures)) {}
    }

    @Test(arguments: sources)
    func scenarios2to4_indexAssetByURLAndWWWFile(source: MeteorFixtureSource) async throws {
        let fixtures = try source.materialize()
        try await withBundledServer(fixtures) { port in
            let index = try await LoopbackHTTP.request(port: port, "/")
            #expect(index.status == 200)
            #expect(index["content-type"]?.hasPrefix("text/html") == true)
            #expect(index.text.contains(fixtures.title))
            #expect(
                index.text.range(of: "<head>")?.upperBound == index.text.range(of: "<script \(Shim.marker)")?.lowerBound,
                "the shim is the first element of <head>")
            #expect(index["cache-control"] == "no-cache")

            let someFile = try await LoopbackHTTP.request(port: port, "/some-file")
            #expect(someFile.status == 200)
            let expected = try Data(contentsOf: URL(fileURLWithPath: fixtures.embedded + "/app/some-file"))
            #expect(someFile.body == expected)

            let plugins = try await LoopbackHTTP.request(port: port, "/cordova_plugins.js")
            #expect(plugins.status == 200)
            #expect(plugins.text.hasPrefix("cordova.define('cordova/plugin_list'"))
            #expect(plugins["cache-control"] == "no-cache")
        }
    }

    @Test(
        arguments: sources, ["/anything", "/application/packages/meteor.js", "/not-in-manifest", "/application/not-in-manifest", "/a/deep/route"])
    func scenarios5to8_unknownPathsGetIndex(source: MeteorFixtureSource, path: String) async throws {
        let fixtures = try source.materialize()
        try await withBundledServer(fixtures) { port in
            let response = try await LoopbackHTTP.request(port: port, path)
            #expect(response.status == 200)
            #expect(response["content-type"]?.hasPrefix("text/html") == true)
            #expect(response.text.contains(fixtures.title))
        }
    }

    @Test(arguments: sources)
    func scenario9_faviconAndMissingAssetsAre404(source: MeteorFixtureSource) async throws {
        try await withBundledServer(try source.materialize()) { port in
            for path in ["/favicon.ico", "/cordova.js", "/packages/missing.js?abc"] {
                let response = try await LoopbackHTTP.request(port: port, path)
                #expect(response.status == 404, "\(path)")
            }
        }
    }

    @Test(arguments: sources)
    func scenarios10to13_etagCachingAndRanges(source: MeteorFixtureSource) async throws {
        let fixtures = try source.materialize()
        // Reference: /packages/meteor.js, 113991 bytes, hash 57d11a30155349aa5106f8150cee35eac5f4764c.
        let script = try fixtures.cacheBustedScript()
        try await withBundledServer(fixtures) { port in
            let plain = try await LoopbackHTTP.request(port: port, script.urlPath)
            #expect(plain.status == 200)
            #expect(plain["etag"]?.contains(script.hash) == true)
            #expect(plain["cache-control"] == "no-cache")
            #expect(plain["accept-ranges"] == "bytes")
            #expect(plain.body.count == script.size)

            let hashed = try await LoopbackHTTP.request(port: port, script.urlPath + "?" + script.hash)
            #expect(hashed["cache-control"]?.contains("max-age=31536000") == true)
            #expect(hashed["cache-control"]?.contains("immutable") == true)

            let revalidated = try await LoopbackHTTP.request(port: port, script.urlPath, headers: ["If-None-Match": plain["etag"] ?? "-"])
            #expect(revalidated.status == 304)
            #expect(revalidated.body.isEmpty)
            #expect(revalidated["etag"] == plain["etag"])

            let range = try await LoopbackHTTP.request(port: port, script.urlPath, headers: ["Range": "bytes=10-19"])
            #expect(range.status == 206)
            #expect(range["content-range"] == "bytes 10-19/\(script.size)")
            #expect(range.body == plain.body.subdata(in: 10..<20))
        }
    }

    @Test(arguments: sources)
    func scenarios14and15_sourceMaps(source: MeteorFixtureSource) async throws {
        let fixtures = try source.materialize()
        // Reference: hash 979b20f66caf126704c250fbd29ce253c6cb490e, map /app/<hash>.map.
        let entry = try fixtures.cacheBustedScript("/app/template.mobileapp.js")
        let mapURL = try #require(entry.sourceMapURL)
        try await withBundledServer(fixtures) { port in
            let script = try await LoopbackHTTP.request(port: port, entry.urlPath + "?" + entry.hash)
            #expect(script["x-sourcemap"]?.contains(mapURL) == true)
            let map = try await LoopbackHTTP.request(port: port, mapURL)
            #expect(map.status == 200)
            #expect(map["cache-control"]?.contains("max-age=31536000") == true)
            #expect(map.text.contains("app/template.mobileapp.js"))
        }
    }

    @Test(
        arguments: sources,
        [
            ("/app/template.mobileapp.js", "text/javascript"), ("/merged-stylesheets.css", "text/css"),
            ("/some-page.html", "text/html"), ("/some-javascript.js", "text/javascript"), ("/some-stylesheet.css", "text/css"),
            ("/some-data.json", "application/json"), ("/some-text.txt", "text/plain"), ("/some-image.png", "image/png"),
            ("/some-image.jpg", "image/jpeg"), ("/some-video.mp4", "video/mp4"), ("/some-font.woff", "font/woff"),
            ("/some-file", "application/octet-stream"),
        ])
    func scenarios16to26_contentTypeByExtension(source: MeteorFixtureSource, file: (String, String)) async throws {
        let (path, type) = file
        try await withBundledServer(try source.materialize()) { port in
            let response = try await LoopbackHTTP.request(port: port, path)
            #expect(response.status == 200)
            #expect(response["content-type"]?.hasPrefix(type) == true, "\(path): \(response["content-type"] ?? "none")")
            #expect(response["content-length"] == String(response.body.count))
        }
    }

    @Test(arguments: sources)
    func headAndContentSecurityPolicy(source: MeteorFixtureSource) async throws {
        try await withBundledServer(try source.materialize(), csp: "default-src 'self'") { port in
            let head = try await LoopbackHTTP.request(port: port, "/some-video.mp4", method: "HEAD")
            let get = try await LoopbackHTTP.request(port: port, "/some-video.mp4")
            #expect(head.status == 200 && head.body.isEmpty)
            #expect(head["content-length"] == String(get.body.count))
            #expect(head["etag"] == get["etag"])
            #expect(get["content-security-policy"] == "default-src 'self'")
        }
    }
}

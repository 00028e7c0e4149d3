import ClientServer
import ClientShim
import ClientUpdater
import Foundation
import TestSupport
import Testing

/// Scenarios 2–26 of docs/meteor.md#the-reference-test-suite (the Cordova plugin's test suite) against the
/// server over real HTTP, serving the reference `bundled_www` organized by the organizer.
@Suite(.enabled(if: MeteorFixture.bundledWWW != nil, Comment(rawValue: MeteorFixture.skipMessage)))
struct MeteorServingTests {
    /// Organizes the bundled version and runs `body` against a live server for it.
    func withBundledServer(csp: String? = nil, _ body: @Sendable (Int) async throws -> Void) async throws {
        let www = try #require(MeteorFixture.bundledWWW)
        let root = try TemporaryDirectory("meteor-serve")
        let layout = RootLayout(root: root.path)
        let (id, assets) = try MeteorFixture.embeddedAssets(www: www, layout: layout)
        #expect(id == "version1")
        try Organizer(layout: layout).organize(id: id, assets: assets)
        let server = try ClientServer(configuration: ServerHarness.configuration(www: www, csp: csp), logger: ServerHarness.quietLogger)
        try server.activate(servingDirectory: try #require(layout.servingDirectory("version1")))
        try await ServerHarness.withServer(server, body)
        withExtendedLifetime(root) {}
    }

    @Test func scenarios2to4_indexAssetByURLAndWWWFile() async throws {
        try await withBundledServer { port in
            let index = try await LoopbackHTTP.request(port: port, "/")
            #expect(index.status == 200)
            #expect(index["content-type"]?.hasPrefix("text/html") == true)
            #expect(index.text.contains("<title>mobileapp</title>"))
            #expect(
                index.text.range(of: "<head>")?.upperBound == index.text.range(of: "<script \(Shim.marker)")?.lowerBound,
                "the shim is the first element of <head>")
            #expect(index["cache-control"] == "no-cache")

            let someFile = try await LoopbackHTTP.request(port: port, "/some-file")
            #expect(someFile.status == 200)
            let www = try #require(MeteorFixture.bundledWWW)
            let expected = try Data(contentsOf: URL(fileURLWithPath: www + "/application/app/some-file"))
            #expect(someFile.body == expected)

            let plugins = try await LoopbackHTTP.request(port: port, "/cordova_plugins.js")
            #expect(plugins.status == 200)
            #expect(plugins.text.hasPrefix("cordova.define('cordova/plugin_list'"))
            #expect(plugins["cache-control"] == "no-cache")
        }
    }

    @Test(arguments: ["/anything", "/application/packages/meteor.js", "/not-in-manifest", "/application/not-in-manifest", "/a/deep/route"])
    func scenarios5to8_unknownPathsGetIndex(path: String) async throws {
        try await withBundledServer { port in
            let response = try await LoopbackHTTP.request(port: port, path)
            #expect(response.status == 200)
            #expect(response["content-type"]?.hasPrefix("text/html") == true)
            #expect(response.text.contains("<title>mobileapp</title>"))
        }
    }

    @Test func scenario9_faviconAndMissingAssetsAre404() async throws {
        try await withBundledServer { port in
            for path in ["/favicon.ico", "/cordova.js", "/packages/missing.js?abc"] {
                let response = try await LoopbackHTTP.request(port: port, path)
                #expect(response.status == 404, "\(path)")
            }
        }
    }

    @Test func scenarios10to13_etagCachingAndRanges() async throws {
        try await withBundledServer { port in
            let plain = try await LoopbackHTTP.request(port: port, "/packages/meteor.js")
            #expect(plain.status == 200)
            #expect(plain["etag"]?.contains("57d11a30155349aa5106f8150cee35eac5f4764c") == true)
            #expect(plain["cache-control"] == "no-cache")
            #expect(plain["accept-ranges"] == "bytes")
            #expect(plain.body.count == 113991)

            let hashed = try await LoopbackHTTP.request(port: port, "/packages/meteor.js?57d11a30155349aa5106f8150cee35eac5f4764c")
            #expect(hashed["cache-control"]?.contains("max-age=31536000") == true)
            #expect(hashed["cache-control"]?.contains("immutable") == true)

            let revalidated = try await LoopbackHTTP.request(port: port, "/packages/meteor.js", headers: ["If-None-Match": plain["etag"] ?? "-"])
            #expect(revalidated.status == 304)
            #expect(revalidated.body.isEmpty)
            #expect(revalidated["etag"] == plain["etag"])

            let range = try await LoopbackHTTP.request(port: port, "/packages/meteor.js", headers: ["Range": "bytes=10-19"])
            #expect(range.status == 206)
            #expect(range["content-range"] == "bytes 10-19/113991")
            #expect(range.body == plain.body.subdata(in: 10..<20))
        }
    }

    @Test func scenarios14and15_sourceMaps() async throws {
        try await withBundledServer { port in
            let script = try await LoopbackHTTP.request(port: port, "/app/template.mobileapp.js?979b20f66caf126704c250fbd29ce253c6cb490e")
            #expect(script["x-sourcemap"]?.contains("/app/979b20f66caf126704c250fbd29ce253c6cb490e.map") == true)
            let map = try await LoopbackHTTP.request(port: port, "/app/979b20f66caf126704c250fbd29ce253c6cb490e.map")
            #expect(map.status == 200)
            #expect(map["cache-control"]?.contains("max-age=31536000") == true)
            #expect(map.text.contains("meteor://💻app/template.mobileapp.js"))
        }
    }

    @Test(arguments: [
        ("/app/template.mobileapp.js", "text/javascript"), ("/merged-stylesheets.css", "text/css"),
        ("/some-page.html", "text/html"), ("/some-javascript.js", "text/javascript"), ("/some-stylesheet.css", "text/css"),
        ("/some-data.json", "application/json"), ("/some-text.txt", "text/plain"), ("/some-image.png", "image/png"),
        ("/some-image.jpg", "image/jpeg"), ("/some-video.mp4", "video/mp4"), ("/some-font.woff", "font/woff"),
        ("/some-file", "application/octet-stream"),
    ])
    func scenarios16to26_contentTypeByExtension(path: String, type: String) async throws {
        try await withBundledServer { port in
            let response = try await LoopbackHTTP.request(port: port, path)
            #expect(response.status == 200)
            #expect(response["content-type"]?.hasPrefix(type) == true, "\(path): \(response["content-type"] ?? "none")")
            #expect(response["content-length"] == String(response.body.count))
        }
    }

    @Test func headAndContentSecurityPolicy() async throws {
        try await withBundledServer(csp: "default-src 'self'") { port in
            let head = try await LoopbackHTTP.request(port: port, "/some-video.mp4", method: "HEAD")
            let get = try await LoopbackHTTP.request(port: port, "/some-video.mp4")
            #expect(head.status == 200 && head.body.isEmpty)
            #expect(head["content-length"] == String(get.body.count))
            #expect(head["etag"] == get["etag"])
            #expect(get["content-security-policy"] == "default-src 'self'")
        }
    }
}

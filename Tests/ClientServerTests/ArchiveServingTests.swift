import ClientFoundation
import ClientServer
import ClientShim
import ClientUpdater
import Foundation
import ServingCore
import TestSupport
import Testing

@Suite struct ArchiveServingTests {
    func withServer(_ root: ArchiveRoot, fileLimit: Int = 1 << 20, _ body: @Sendable (Int) async throws -> Void) async throws {
        let server = try ClientServer(configuration: ServerHarness.configuration(fileLimit: fileLimit), logger: ServerHarness.quietLogger)
        try server.activate(servingDirectory: root.serving("1.0.0"))
        try await ServerHarness.withServer(server, body)
    }

    @Test func indexRoutingAnd404s() async throws {
        let root = try ArchiveRoot.standard()
        try await withServer(root) { port in
            for path in ["/", "/index.html", "/settings", "/users/42/edit"] {
                let response = try await LoopbackHTTP.request(port: port, path)
                #expect(response.status == 200, "\(path)")
                #expect(response.text.hasPrefix("<!doctype html><html><head lang=\"en\"><script \(Shim.marker)"), "\(path)")
                #expect(response["cache-control"] == "no-cache")
            }
            for path in ["/favicon.ico", "/missing.js", "/assets/other-B2x9Kq1z.js", "/../etc/passwd", "/%2e%2e/index.html"] {
                let response = try await LoopbackHTTP.request(port: port, path)
                #expect(response.status == 404, "\(path)")
            }
        }
    }

    @Test func cachingHeadersAndETags() async throws {
        let root = try ArchiveRoot.standard()
        try await withServer(root) { port in
            let hashedName = try await LoopbackHTTP.request(port: port, "/assets/app-B2x9Kq1z.js")
            #expect(hashedName["cache-control"] == "public, max-age=31536000, immutable")
            #expect(hashedName["content-type"]?.hasPrefix("text/javascript") == true)

            let css = try await LoopbackHTTP.request(port: port, "/style.css")
            #expect(css["cache-control"] == "no-cache")
            #expect(css["etag"] == "\"" + Digest.hex(.sha256, of: Data("body{color:red}".utf8)) + "\"")
            let cssWithQuery = try await LoopbackHTTP.request(port: port, "/style.css?v=2")
            #expect(cssWithQuery["cache-control"] == "public, max-age=31536000, immutable")

            let notModified = try await LoopbackHTTP.request(
                port: port, "/style.css", headers: ["If-None-Match": "W/\"nope\", \(css["etag"] ?? "-")"])
            #expect(notModified.status == 304 && notModified.body.isEmpty)
            let changed = try await LoopbackHTTP.request(port: port, "/style.css", headers: ["If-None-Match": "\"other\""])
            #expect(changed.status == 200 && changed.text == "body{color:red}")

            let index = try await LoopbackHTTP.request(port: port, "/")
            let indexAgain = try await LoopbackHTTP.request(port: port, "/", headers: ["If-None-Match": index["etag"] ?? "-"])
            #expect(indexAgain.status == 304)

            let types = [
                ("/logo.svg", "image/svg+xml"), ("/mod.wasm", "application/wasm"), ("/font.woff2", "font/woff2"),
                ("/video.bin", "application/octet-stream"),
            ]
            for (path, type) in types {
                let response = try await LoopbackHTTP.request(port: port, path, method: "HEAD")
                #expect(response["content-type"] == type, "\(path)")
            }
            let spaced = try await LoopbackHTTP.request(port: port, "/hello%20world.txt")
            #expect(spaced.status == 200 && spaced.text == "hi")
            let post = try await LoopbackHTTP.request(port: port, "/style.css", method: "POST")
            #expect(post.status == 405)
        }
    }

    /// Ranges from memory (small limit off) and streamed from disk (limit below the file).
    @Test(arguments: [1 << 20, 1024])
    func byteRanges(fileLimit: Int) async throws {
        let root = try ArchiveRoot.standard()
        let big = ArchiveRoot.big
        try await withServer(root, fileLimit: fileLimit) { port in
            let whole = try await LoopbackHTTP.request(port: port, "/video.bin")
            #expect(whole.status == 200 && whole.body == big)
            #expect(whole["etag"] == "\"" + Digest.hex(.sha256, of: big) + "\"")
            let cases: [(String, Range<Int>, String)] = [
                ("bytes=0-0", 0..<1, "bytes 0-0/300000"), ("bytes=1000-", 1000..<300_000, "bytes 1000-299999/300000"),
                ("bytes=-500", 299_500..<300_000, "bytes 299500-299999/300000"),
                ("bytes=299990-400000", 299_990..<300_000, "bytes 299990-299999/300000"),
            ]
            for (header, range, contentRange) in cases {
                let response = try await LoopbackHTTP.request(port: port, "/video.bin", headers: ["Range": header])
                #expect(response.status == 206, "\(header)")
                #expect(response["content-range"] == contentRange)
                #expect(response.body == big.subdata(in: range), "\(header)")
            }
            let beyond = try await LoopbackHTTP.request(port: port, "/video.bin", headers: ["Range": "bytes=300000-"])
            #expect(beyond.status == 416 && beyond["content-range"] == "bytes */300000")
            let several = try await LoopbackHTTP.request(port: port, "/video.bin", headers: ["Range": "bytes=0-1,5-6"])
            #expect(several.status == 200 && several.body.count == 300_000)
            let staleIfRange = try await LoopbackHTTP.request(port: port, "/video.bin", headers: ["Range": "bytes=0-1", "If-Range": "\"old\""])
            #expect(staleIfRange.status == 200 && staleIfRange.body.count == 300_000)
            let head = try await LoopbackHTTP.request(port: port, "/video.bin", method: "HEAD", headers: ["Range": "bytes=0-9"])
            #expect(head.status == 206 && head["content-length"] == "10" && head.body.isEmpty)
        }
    }

    @Test func aFolderWithoutMetadataIsServedAsAPlainTree() async throws {
        let dir = try TemporaryDirectory("plain-tree")
        try Data("<html><head></head></html>".utf8).write(to: URL(fileURLWithPath: dir("index.html")))
        try Data("a".utf8).write(to: URL(fileURLWithPath: dir("a.txt")))
        let server = try ClientServer(configuration: ServerHarness.configuration(), logger: ServerHarness.quietLogger)
        #expect(try server.activate(servingDirectory: dir.path) == (dir.path as NSString).lastPathComponent)
        try await ServerHarness.withServer(server) { port in
            let a = try await LoopbackHTTP.request(port: port, "/a.txt")
            #expect(a.status == 200 && a.text == "a")
            let route = try await LoopbackHTTP.request(port: port, "/route")
            #expect(route.text == "<html><head></head></html>")
        }
    }

    @Test func badConfigurationIsRefused() throws {
        #expect(throws: ServerError.self) { try ClientServer(configuration: ServerConfiguration(port: 70000)) }
        #expect(throws: ServerError.self) { try ClientServer(configuration: ServerConfiguration(port: 0, contentSecurityPolicy: "a\r\nX-Evil: 1")) }
        let server = try ClientServer(configuration: ServerHarness.configuration(), logger: ServerHarness.quietLogger)
        #expect(throws: ServerError.self) { try server.activate(servingDirectory: "/nonexistent/serving/1.0.0") }
    }

    @Test func derivedPortIsStableAndInRange() {
        let port = ServerConfiguration.derivedPort(forApp: "com.example.notes")
        #expect(ServerConfiguration.derivedPortRange.contains(port))
        #expect(port == ServerConfiguration.derivedPort(forApp: "com.example.notes"))
        let ports = Set((0..<200).map { ServerConfiguration.derivedPort(forApp: "com.example.app\($0)") })
        #expect(ports.count > 150, "ids spread over the range")
        #expect(ports.allSatisfy { ServerConfiguration.derivedPortRange.contains($0) })
    }
}

import ClientFoundation
import ClientServer
import ClientShim
import ClientUpdater
import Foundation
import TestSupport
import Testing

/// Folder indexes (docs/serving.md#folder-indexes), over HTTP on 127.0.0.1 with raw
/// requests: `/about/` is `/about/index.html`, `/about` is a 301 to `/about/`, a folder
/// without index.html and a path naming nothing get the client-route page, and dot
/// segments still name nothing.
@Suite struct FolderIndexTests {
    static let about = "<!doctype html><html><head><title>about</title></head><body><p>about page</p></body></html>"
    static let team = "<!doctype html><html><head><title>team</title></head><body><p>team page</p></body></html>"
    static let csp = "default-src 'self'"

    /// A version shaped like a mkdocs site and a JupyterLite deployment: pages in folders.
    static func root() throws -> ArchiveRoot {
        try ArchiveRoot(versions: [
            "1.0.0": [
                "index.html": Data(ArchiveRoot.page.utf8), "about/index.html": Data(about.utf8), "about/logo.svg": Data("<svg/>".utf8),
                "about/team/index.html": Data(team.utf8), "lab/index.html": Data("<html><head></head><body>lab</body></html>".utf8),
                "v1.2/index.html": Data("<p>v1.2</p>".utf8), "caf\u{E9} & co/index.html": Data("<p>cafe</p>".utf8),
                "assets/app.js": Data("console.log(1)".utf8),
            ]
        ])
    }

    func withServer(_ body: @Sendable (Int) async throws -> Void) async throws {
        let root = try Self.root()
        let server = try ClientServer(configuration: ServerHarness.configuration(csp: Self.csp), logger: ServerHarness.quietLogger)
        try server.activate(servingDirectory: root.serving("1.0.0"))
        defer { withExtendedLifetime(root) {} }  // its temporary folder holds the serving folder
        try await ServerHarness.withServer(server, body)
    }

    @Test func aFolderWithItsSlashIsAnsweredAsItsIndexFile() async throws {
        try await withServer { port in
            let file = try await LoopbackHTTP.request(port: port, "/about/index.html")
            #expect(file.status == 200 && file.text.contains("about page"))
            #expect(file.text.contains(Shim.marker), "a folder's page gets the shim, as the root's: \(file.text)")
            #expect(file["etag"] == "\"" + Digest.hex(.sha256, of: file.body) + "\"")
            for target in ["/about/", "/about/?q=1"] {
                let folder = try await LoopbackHTTP.request(port: port, target)
                #expect(folder.status == 200 && folder.body == file.body, "\(target)")
                for name in ["content-type", "etag", "cache-control", "accept-ranges", "content-security-policy", "content-length"] {
                    #expect(folder[name] == file[name], "\(target): \(name)")
                }
            }
            #expect(file["content-type"] == "text/html; charset=utf-8" && file["cache-control"] == "no-cache")
            #expect(file["content-security-policy"] == Self.csp)

            let etag = try #require(file["etag"])
            let notModified = try await LoopbackHTTP.request(port: port, "/about/", headers: ["If-None-Match": etag])
            #expect(notModified.status == 304 && notModified.body.isEmpty)
            let head = try await LoopbackHTTP.request(port: port, "/about/", method: "HEAD")
            #expect(head.status == 200 && head["content-length"] == String(file.body.count) && head["etag"] == etag)
            let range = try await LoopbackHTTP.request(port: port, "/about/", headers: ["Range": "bytes=0-14", "If-Range": etag])
            #expect(range.status == 206 && range["content-range"] == "bytes 0-14/\(file.body.count)")
            #expect(range.body == file.body.prefix(15))
            let past = try await LoopbackHTTP.request(port: port, "/about/", headers: ["Range": "bytes=\(file.body.count)-"])
            #expect(past.status == 416)

            let pages = [
                ("/about/team/", "team page"), ("/lab/", "lab"), ("/v1.2/", "v1.2"), ("/caf%C3%A9%20%26%20co/", "cafe"),
            ]
            for (target, text) in pages {
                let page = try await LoopbackHTTP.request(port: port, target)
                #expect(page.status == 200 && page.text.contains(text) && page.text.contains(Shim.marker), "\(target): \(page.text)")
            }
            let logo = try await LoopbackHTTP.request(port: port, "/about/logo.svg")
            #expect(logo.status == 200 && logo["content-type"] == "image/svg+xml", "files in a folder are served as before")
        }
    }

    @Test func aFolderWithoutItsSlashIsRedirectedKeepingTheQuery() async throws {
        try await withServer { port in
            let cases = [
                ("/about", "/about/"), ("/about?q=1", "/about/?q=1"), ("/about/team?a=1&b=%20", "/about/team/?a=1&b=%20"),
                ("/lab", "/lab/"), ("/v1.2", "/v1.2/"), ("/caf%C3%A9%20%26%20co?x", "/caf%C3%A9%20%26%20co/?x"),
                ("/lab?%3Cscript%3E=\"'", "/lab/?%3Cscript%3E=%22%27"),
            ]
            for (target, location) in cases {
                let response = try await LoopbackHTTP.request(port: port, target)
                #expect(response.status == 301 && response["location"] == location, "\(target): \(response.status) \(response.headers)")
                #expect(response["cache-control"] == "no-cache", "a later version may make it a file")
                #expect(response["content-type"] == "text/html; charset=utf-8")
                // The page a client that does not follow redirects (WebKit's app:// scheme) shows.
                let href = location.replacingOccurrences(of: "&", with: "&amp;")
                #expect(response.text.contains("<meta http-equiv=\"refresh\" content=\"0; url=\(href)\">"), "\(response.text)")
                #expect(response.text.contains("<a id=\"to\" href=\"\(href)\">"), "\(response.text)")
            }
            let head = try await LoopbackHTTP.request(port: port, "/about?q=1", method: "HEAD")
            #expect(head.status == 301 && head["location"] == "/about/?q=1" && head.body.isEmpty)

            // Its policy allows its one script and nothing else (not the --csp of the pages).
            let page = try await LoopbackHTTP.request(port: port, "/about")
            let script = try #require(page.text.split(separator: "<script>").last?.split(separator: "</script>").first)
            let digest = try #require(Data(hexString: Digest.hex(.sha256, of: Data(script.utf8))))
            #expect(page["content-security-policy"] == "default-src 'none'; script-src 'sha256-\(digest.base64EncodedString())'")
        }
    }

    @Test func aPathNamingNothingStillGetsTheRootPage() async throws {
        try await withServer { port in
            let root = try await LoopbackHTTP.request(port: port, "/")
            for target in ["/nothing/here", "/nothing/here/", "/about/missing", "/about/team/42", "/aboutx", "/about/index"] {
                let response = try await LoopbackHTTP.request(port: port, target)
                #expect(response.status == 200 && response.body == root.body, "\(target): client route")
            }
            for target in ["/about/missing.js", "/about/index.htm"] {
                #expect(try await LoopbackHTTP.request(port: port, target).status == 404, "\(target)")
            }
        }
    }

    /// nginx answers 403 for a folder without index.html (autoindex off); here the folder
    /// is no folder index, so the rules go on: an extension-less path is a client route.
    @Test func aFolderWithoutIndexFallsThroughToClientRoutes() async throws {
        try await withServer { port in
            let root = try await LoopbackHTTP.request(port: port, "/")
            for target in ["/assets/", "/assets", "/assets?q=1"] {
                let response = try await LoopbackHTTP.request(port: port, target)
                #expect(response.status == 200 && response.body == root.body, "\(target): \(response.status)")
            }
            #expect(try await LoopbackHTTP.request(port: port, "/assets/app.js").text == "console.log(1)")
        }
    }

    @Test func traversalLookingFolderNamesAreStillRefused() async throws {
        try await withServer { port in
            let refused = [
                "/about/../about/", "/about/..", "/about/.", "/./about/", "/%2e%2e/about/", "/about/%2e%2e/", "/about/%2E/",
                "/..%2fabout/", "/about/%00/", "/about%00",
            ]
            for target in refused {
                let response = try await LoopbackHTTP.request(port: port, target)
                #expect(response.status == 404 && response["location"] == nil, "\(target): \(response.status)")
            }
            // An empty first segment names no folder: never a redirect to `//about/`, which a
            // browser would read as the host `about`.
            for target in ["//about", "//about/"] {
                let response = try await LoopbackHTTP.request(port: port, target)
                #expect(response.status != 301 && response["location"] == nil, "\(target): \(response.status) \(response.headers)")
            }
        }
    }

    @Test func aPlainTreeHasFolderIndexesToo() async throws {
        let dir = try TemporaryDirectory("plain-tree-folders")
        try FileManager.default.createDirectory(atPath: dir("docs"), withIntermediateDirectories: true)
        try Data("<html><head></head>root</html>".utf8).write(to: URL(fileURLWithPath: dir("index.html")))
        try Data("<html><head></head>docs</html>".utf8).write(to: URL(fileURLWithPath: dir("docs/index.html")))
        let server = try ClientServer(configuration: ServerHarness.configuration(), logger: ServerHarness.quietLogger)
        try server.activate(servingDirectory: dir.path)
        try await ServerHarness.withServer(server) { port in
            let page = try await LoopbackHTTP.request(port: port, "/docs/")
            #expect(page.status == 200 && page.text == "<html><head></head>docs</html>")
            let redirect = try await LoopbackHTTP.request(port: port, "/docs?x=1")
            #expect(redirect.status == 301 && redirect["location"] == "/docs/?x=1")
        }
    }
}

extension Data {
    /// Bytes of a hex string (nil when it is not one).
    fileprivate init?(hexString: String) {
        let digits = Array(hexString.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        for i in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[i...i + 1], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        self.init(bytes)
    }
}

import ClientShim
import ClientUpdater
import Foundation
import TestSupport
import Testing

/// Folder indexes (docs/serving.md#folder-indexes) from a real `clientctl serve` of a
/// published and installed release, with curl and headless Chromium: a page in a folder
/// (a mkdocs `about/`) is served for `/about/`, `/about` is redirected there, and the
/// page, shimmed like the root's, acknowledges start-up by itself.
@Suite(.serialized) struct FolderIndexServeTests {
    /// Writes where the browser ended up into `<p id="where">`, then acknowledges.
    static let aboutScript = """
        var where = document.createElement('p'); where.id = 'where';
        where.textContent = location.pathname + location.search + location.hash; document.body.appendChild(where);
        """ + ReleaseRig.acknowledging

    @Test func serveAnswersAFolderPageAndRedirectsItsBareName() async throws {
        let rig = try await ReleaseRig(startupTimeout: 600, label: "folder-index")  // no trial ends while a loaded suite runs
        try await rig.publish(
            "1.0.0", script: "",  // the root page never acknowledges: only about/ can
            extra: [
                "about/index.html": ReleaseRig.page(version: "about 1.0.0", script: Self.aboutScript),
                "about/page.css": Data("p { color: #00f; }\n".utf8), "assets/app.js": Data("console.log(1)\n".utf8),
            ])
        try await rig.run(["install", "--root", rig.root])
        let serve = try await ServeProcess(root: rig.root, scratch: rig.tmp.path)
        defer { serve.stop() }

        let file = try await serve.get("/about/index.html")
        let folder = try await serve.get("/about/")
        #expect(folder.status == 200 && folder.data == file.data, "\(folder.status) \(serve.stderr)")
        #expect(folder.body.contains("about 1.0.0") && folder.body.contains(Shim.marker), "the folder's page is shimmed: \(folder.body)")
        for name in ["etag", "content-type", "cache-control", "accept-ranges", "content-length"] {
            #expect(folder[name] != nil && folder[name] == file[name], "\(name)")
        }
        let etag = try #require(folder["etag"])
        let head = try await Curl.request(serve.baseURL + "about/", method: "HEAD")
        #expect(head.status == 200 && head["etag"] == etag && head["content-length"] == String(file.data.count))
        let range = try await Curl.request(serve.baseURL + "about/", headers: ["Range: bytes=0-8"])
        #expect(range.status == 206 && range.body == "<!doctype" && range["content-range"] == "bytes 0-8/\(file.data.count)")
        let notModified = try await Curl.request(serve.baseURL + "about/", headers: ["If-None-Match: \(etag)"])
        #expect(notModified.status == 304)

        let redirect = try await serve.get("/about?q=1")
        #expect(redirect.status == 301 && redirect["location"] == "/about/?q=1", "\(redirect.status) \(redirect.headers)")
        let headRedirect = try await Curl.request(serve.baseURL + "about?q=1", method: "HEAD")
        #expect(headRedirect.status == 301 && headRedirect["location"] == "/about/?q=1")

        let root = try await serve.get("/")
        for path in ["/nothing/here", "/assets/", "/assets"] {
            let route = try await serve.get(path)
            #expect(route.status == 200 && route.data == root.data, "\(path): the client-route page")
        }

        // A browser follows the redirect, keeps query and fragment, and the folder's own
        // page acknowledges start-up through its shim.
        let dom = try await Chromium.dumpDOM(serve.baseURL + "about?q=1#part")
        #expect(Chromium.text(of: "where", in: dom) == "/about/?q=1#part", "\(dom)")
        #expect(Chromium.text(of: "acked", in: dom) == "yes", "\(dom)")
        let status = try await rig.waitForStatus { $0.lastKnownGood == "1.0.0" }
        #expect(status.trial == nil)
        #expect(serve.process.isRunning, "\(serve.stderr)")
    }
}

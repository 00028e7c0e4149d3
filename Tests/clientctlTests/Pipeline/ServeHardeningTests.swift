import ClientUpdater
import Foundation
import TestSupport
import Testing

/// Issue 10 (serving points) against a real `clientctl serve` process and real sockets:
/// nothing a page, a planted file or a silent client does stops `serve` or hangs it.
@Suite(.serialized) struct ServeHardeningTests {

    /// A root on 1.0.0 (acknowledged) with an empty stylesheet, a script, and a file named
    /// with a composed `é`, served by a real `clientctl serve`.
    static func servedRoot(_ label: String, serveArguments: [String] = [], ulimit: Int? = nil) async throws -> (ReleaseRig, ServeProcess) {
        let rig = try await ReleaseRig(startupTimeout: 600, label: label)  // no trial ends while a loaded suite runs a test
        try await rig.publish(
            "1.0.0", script: ReleaseRig.acknowledging,
            extra: [
                "empty.css": Data(), "app.js": Data("console.log(1)\n".utf8), "\u{E9}.txt": Data("composed\n".utf8),
            ])
        try await rig.run(["install", "--root", rig.root])
        let serve = try await ServeProcess(root: rig.root, arguments: serveArguments, scratch: rig.tmp.path, ulimit: ulimit)
        return (rig, serve)
    }

    // Each test keeps its rig alive (`withExtendedLifetime`): the rig's temporary folder
    // holds the device root serve is serving.

    /// The organized folder of the version being served.
    static func servingFolder(_ rig: ReleaseRig) throws -> String {
        let base = rig.root + "/serving"
        for name in try FileManager.default.contentsOfDirectory(atPath: base) {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: base + "/" + name, isDirectory: &isDirectory), isDirectory.boolValue,
                FileManager.default.fileExists(atPath: base + "/" + name + "/empty.css")
            {
                return base + "/" + name
            }
        }
        throw HarnessError("no serving folder in \(base)")
    }

    @Test func anEmptyFileIsServedNotACrash() async throws {
        let (rig, serve) = try await Self.servedRoot("empty-file")
        defer { withExtendedLifetime(rig) {} }
        let get = try await serve.get("/empty.css")
        #expect(get.status == 200 && get.body.isEmpty, "\(get) \(serve.stderr)")
        let head = try await Curl.request(serve.baseURL + "empty.css", method: "HEAD")
        #expect(head.status == 200)
        let range = try await Curl.request(serve.baseURL + "empty.css", headers: ["Range: bytes=0-"])
        #expect(range.status == 416, "no byte of an empty file can be sent")
        let suffix = try await Curl.request(serve.baseURL + "empty.css", headers: ["Range: bytes=-5"])
        #expect(suffix.status == 416)
        #expect(serve.process.isRunning, "serve survived: \(serve.stderr)")
        await #expect(try serve.get("/").status == 200)
    }

    @Test
    func aPageOfAnotherOriginCannotCrashServeWithAnEmptyFile() async throws {
        let (rig, serve) = try await Self.servedRoot("empty-file-browser")
        let page = ReleaseRig.page(
            version: "other",
            script: """
                var img = new Image(); img.onload = img.onerror = function () {
                  var p = document.createElement('p'); p.id = 'loaded'; p.textContent = 'done'; document.body.appendChild(p); };
                img.src = '\(serve.baseURL)empty.css';
                """)
        let other = try LoopbackHTTPServer { _ in
            LoopbackResponse(status: 200, headers: [("Content-Type", "text/html; charset=utf-8")], body: .data(page))
        }
        defer { other.stop() }
        let dom = try await Chromium.dumpDOM(other.url("/page.html").absoluteString)
        #expect(Chromium.text(of: "loaded", in: dom) == "done", "\(dom)")
        #expect(serve.process.isRunning, "serve survived: \(serve.stderr)")
        // The version's own page still loads and acknowledges: the trial was not failed.
        let own = try await Chromium.dumpDOM(serve.baseURL)
        #expect(Chromium.text(of: "acked", in: own) == "yes")
        await #expect(try rig.waitForStatus { $0.lastKnownGood == "1.0.0" }.current == .installed("1.0.0"))
    }

    @Test func plantedFIFOsAndSymlinksAreRefusedFast() async throws {
        let (rig, serve) = try await Self.servedRoot("planted")
        let folder = try Self.servingFolder(rig)
        try FileManager.default.removeItem(atPath: folder + "/style.css")
        #expect(mkfifo(folder + "/style.css", 0o644) == 0)
        try FileManager.default.removeItem(atPath: folder + "/app.js")
        try FileManager.default.createSymbolicLink(atPath: folder + "/app.js", withDestinationPath: "/etc/hostname")

        let start = Date()
        await #expect(try serve.get("/style.css").status == 404, "a FIFO is not a file to serve")
        await #expect(try serve.get("/app.js").status == 404, "a symlink is never followed")
        #expect(Date().timeIntervalSince(start) < 15, "answered without waiting on the FIFO")
        await #expect(try Curl.request(serve.baseURL + "__clientctl/status").status == 200)
        #expect(serve.stderr.contains("refusing to serve"), "\(serve.stderr)")
        #expect(serve.stop(SIGTERM) == 0, "SIGTERM still ends serve: \(serve.stderr)")
    }

    @Test func requestPathsCompareByBytes() async throws {
        let (rig, serve) = try await Self.servedRoot("unicode-path")
        defer { withExtendedLifetime(rig) {} }
        await #expect(try serve.get("/%C3%A9.txt").status == 200, "the composed name as published")
        let decomposed = try await serve.get("/e%CC%81.txt")
        #expect(decomposed.status == 404 && !decomposed.body.contains("composed"), "a canonically equivalent spelling is another path")
    }
}

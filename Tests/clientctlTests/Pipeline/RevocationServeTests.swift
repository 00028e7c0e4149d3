import ClientUpdater
import Foundation
import SignedManifest
import TestSupport
import Testing

/// Revocation through `clientctl serve` with a page open: the page's event stream (what
/// the shim listens to) gets `reload` naming the version switched to, the server serves
/// it at once, and the next check installs what the feed offers.
@Suite struct RevocationServeTests {
    @Test func aRunningRevokedVersionIsLeftAtTheNextCheckAndOpenPagesReload() async throws {
        let d = try DeviceFixture()
        try await d.installAndCommit(["1.0.0", "1.1.0"])
        let serve = try await ServeProcess(root: d.layout.root, scratch: d.tmp.path)
        defer { serve.stop() }
        #expect(try await serve.get("/").body.contains("<p id=\"version\">1.1.0</p>"))

        // The open page of 1.1.0 listens for events, as the shim does: curl streams them to a
        // file, read until the stream is open (": connected"), then until the reload. The
        // stream ends when serve stops (its graceful shutdown closes event streams), which
        // the deferred stop does however the test ends, so the task is not awaited.
        let received = d.tmp("events.txt")
        _ = Task {
            try await Subprocess.run("curl", ["-sN", "--max-time", "120", "-o", received, serve.baseURL + "__clientctl/events"], gate: nil)
        }
        let events = { String(decoding: FileManager.default.contents(atPath: received) ?? Data(), as: UTF8.self) }
        try await Poll.until("the event stream to open") { events().contains(": connected") }
        try d.publish("1.2.0") { $0["revoked"] = .array([.string("1.1.0")]) }
        #expect(try await serve.control("check").status == 200)

        let reload = "event: reload\ndata: {\"version\":\"1.0.0\"}"
        try await Poll.until("the reload event") { events().contains(reload) }
        #expect(events().contains(reload), "\(events())")
        #expect(try await serve.get("/").body.contains("<p id=\"version\">1.0.0</p>"))
        let dom = try await Chromium.dumpDOM(serve.baseURL)
        #expect(Chromium.text(of: "version", in: dom) == "1.0.0", "a reloaded page gets the version switched to")
        let status = try await d.updater().status()
        #expect(status.current == .installed("1.0.0") && status.blacklist == ["1.1.0"])

        #expect(try await serve.control("check").status == 200)
        #expect(try await d.updater().status().pending == "1.2.0", "the next check installs the release that revoked it")
        #expect(serve.stderr.contains("1.1.0 was revoked by its channel; switched to 1.0.0"), "\(serve.stderr)")
    }
}

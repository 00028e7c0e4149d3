import ClientUpdater
import Foundation
import TestSupport
import Testing

/// Apply policies under `clientctl serve` with a real browser (docs/apply-policies.md#serve):
/// a page left open in headless Chromium that never asks for anything is switched by its
/// shim when the release's policy allows; with no page open, the next navigation (Chromium's
/// own `Sec-Fetch-Mode: navigate` request) gets the new version. The page of the new version
/// acknowledging — `lastKnownGood` — is the proof that the browser loaded it.
@Suite(.serialized) struct ApplyServeTests {
    @Test func anOpenPageThatNeverAsksIsSwitchedByItsShim() async throws {
        let rig = try await ReleaseRig(startupTimeout: 60, label: "apply-serve")
        try await rig.publish("1.0.0", script: ReleaseRig.acknowledging)
        try await rig.run(["install", "--root", rig.root])
        let serve = try await ServeProcess(root: rig.root, scratch: rig.tmp.path)
        let page = try OpenChromiumPage(serve.baseURL)
        defer { page.close() }
        _ = try await rig.waitForStatus(timeout: 60) { $0.lastKnownGood == "1.0.0" }

        // 1.1.0 with mode now: staged by a check, then switched while the page stays open.
        try await rig.publish("1.1.0", script: ReleaseRig.acknowledging, arguments: ["--apply", "now"])
        await #expect(try serve.control("check").status == 200)
        let status = try await rig.waitForStatus(timeout: 90) { $0.lastKnownGood == "1.1.0" }
        #expect(status.current == .installed("1.1.0") && status.trial == nil && status.pending == nil)
        #expect(page.isOpen, "the same browser, reloaded by its shim")
        #expect(serve.stop(SIGTERM) == 0, "\(serve.stderr)")
    }

    @Test func withoutAPageTheNextNavigationGetsTheNewVersion() async throws {
        let rig = try await ReleaseRig(startupTimeout: 60, label: "apply-nav")
        // Each version has a page of its own besides the start page: no shim there, so a
        // navigation to it is no moment to switch (the new version's trial could not end).
        func other(_ version: String) -> [String: Data] {
            ["other.html": Data("<!doctype html><title>other</title><p id=\"other\">\(version)</p>\n".utf8)]
        }
        try await rig.publish("1.0.0", script: ReleaseRig.acknowledging, extra: other("1.0.0"))
        try await rig.run(["install", "--root", rig.root])
        let serve = try await ServeProcess(root: rig.root, scratch: rig.tmp.path)
        var dom = try await Chromium.dumpDOM(serve.baseURL)
        #expect(Chromium.text(of: "version", in: dom) == "1.0.0")
        _ = try await rig.waitForStatus(timeout: 60) { $0.lastKnownGood == "1.0.0" }

        try await rig.publish("1.1.0", script: ReleaseRig.acknowledging, extra: other("1.1.0"), arguments: ["--apply", "next-navigation"])
        await #expect(try serve.control("check").status == 200)
        let waiting = try await rig.waitForStatus(timeout: 30) { $0.apply?.contains("waiting for the page's next navigation") == true }
        #expect(waiting.current == .installed("1.0.0"), "nothing switches before a navigation")
        // curl is no browser navigation: it gets 1.0.0 and switches nothing.
        let plain = try await serve.get("/")
        #expect(plain.body.contains(">1.0.0<"))
        let elsewhere = try await Chromium.dumpDOM(serve.baseURL + "other.html")
        #expect(Chromium.text(of: "other", in: elsewhere) == "1.0.0", "a navigation to another page is served as it was")
        #expect(try await rig.status().current == .installed("1.0.0"), "and switches nothing")
        dom = try await Chromium.dumpDOM(serve.baseURL + "some/client/route")
        #expect(Chromium.text(of: "version", in: dom) == "1.1.0", "the navigation to the start page (a client route) got the new version")
        let status = try await rig.waitForStatus(timeout: 60) { $0.lastKnownGood == "1.1.0" }
        #expect(status.current == .installed("1.1.0"))
        #expect(serve.stop(SIGTERM) == 0, "\(serve.stderr)")
    }
}

import Foundation
import TestSupport
import Testing

/// The real apps of `RealAppsShellTests` under `clientctl serve`, in headless Chromium: the
/// same release (the app in a folder, our ``AppDriver`` page at the root) follows the same
/// links, and a sub-page asked for by its folder's address is that page, not the app's
/// front page nor the root's client-route page.
@Suite(.serialized) struct RealAppsServeTests {
    @Test func aMkdocsMaterialSiteUnderServe() async throws {
        let app = try await RealApp.named(RealApp.mkdocsMaterial)
        let rig = try await ReleaseRig(startupTimeout: 600, label: "serve-real-mkdocs")
        try await app.publish(
            "1.0.0", with: rig, mount: "handbook", driver: AppDriver.page(src: "handbook/", steps: RealApp.handbookSteps))
        try await rig.run(["install", "--root", rig.root])
        let serve = try await ServeProcess(root: rig.root, scratch: rig.tmp.path)
        defer { serve.stop() }

        // Virtual time runs while the search worker builds its index; its wait allows 20 s.
        let dom = try await Chromium.dumpDOM(serve.baseURL, extraArguments: ["--virtual-time-budget=30000"])
        #expect(Chromium.text(of: "verdict", in: dom) == "ok: load 2 at /handbook/about/ titled \"About - Kiosk Handbook\"", "\(dom.suffix(2000))")
        let status = try await rig.waitForStatus { $0.lastKnownGood == "1.0.0" }
        #expect(status.trial == nil)

        for (path, title) in [
            ("handbook/", "Kiosk Handbook"), ("handbook/about/", "About - Kiosk Handbook"), ("handbook/about", "About - Kiosk Handbook"),
            ("handbook/guide/setup/", "Guide - Kiosk Handbook"),
        ] {
            let page = try await Chromium.dumpDOM(serve.baseURL + path)
            #expect(page.contains("<title>\(title)</title>"), "\(path): \(page.prefix(3000))")
        }
        #expect(serve.process.isRunning, "\(serve.stderr)")
    }

    @Test func jupyterLiteUnderServe() async throws {
        let app = try await RealApp.named(RealApp.jupyterLite)
        let rig = try await ReleaseRig(startupTimeout: 600, label: "serve-real-jupyterlite")
        try await app.publish(
            "1.0.0", with: rig, mount: "jupyterlite",
            driver: AppDriver.page(src: "jupyterlite/", steps: RealApp.jupyterLiteSteps))
        try await rig.run(["install", "--root", rig.root])
        let serve = try await ServeProcess(root: rig.root, scratch: rig.tmp.path)
        defer { serve.stop() }

        // Virtual time runs while the page waits on timers, not while it parses its scripts.
        let dom = try await Chromium.dumpDOM(serve.baseURL, extraArguments: ["--virtual-time-budget=60000"])
        #expect(Chromium.text(of: "verdict", in: dom) == "ok: load 2 at /jupyterlite/lab/index.html titled \"JupyterLite\"", "\(dom.suffix(2000))")
        let status = try await rig.waitForStatus { $0.lastKnownGood == "1.0.0" }
        #expect(status.trial == nil)

        // The lab's own page (no other preloads the lab's bundle), by its folder's address.
        for path in ["jupyterlite/lab/", "jupyterlite/lab"] {
            let lab = try await Chromium.dumpDOM(serve.baseURL + path)
            #expect(lab.contains("<title>JupyterLite</title>") && lab.contains("build/lab/bundle.js"), "\(path): \(lab.prefix(3000))")
        }
        #expect(serve.process.isRunning, "\(serve.stderr)")
    }
}

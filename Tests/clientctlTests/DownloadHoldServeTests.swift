import Foundation
import TestSupport
import Testing

/// `WebAppLocalServer.holdDownloads(seconds)` under `clientctl serve` with a real browser
/// (docs/download-policy.md#holds): a page open in headless Chromium holds downloads through
/// its shim, and the check it then asks for finds the release and defers its download; a
/// local process takes a lease of its own with the shim header; a POST from another origin
/// is refused.
@Suite(.serialized) struct DownloadHoldServeTests {
    @Test func aPageUnderServeHoldsDownloadsThroughItsShim() async throws {
        let rig = try await ReleaseRig(startupTimeout: 60, label: "hold-serve")
        let holding = """
            WebAppLocalServer.startupDidComplete(function () {
              WebAppLocalServer.holdDownloads(600).then(function () { WebAppLocalServer.checkForUpdates(); });
            });
            """
        try await rig.publish("1.0.0", script: holding)
        try await rig.run(["install", "--root", rig.root])
        try await rig.publish("1.1.0", script: ReleaseRig.acknowledging)
        let serve = try await ServeProcess(root: rig.root, scratch: rig.tmp.path)
        let page = try OpenChromiumPage(serve.baseURL)
        defer { page.close() }
        var explained = ""
        try await Poll.until("the page's check deferred by its hold", timeout: 120) {
            explained = try await rig.run(["status", "--root", rig.root, "--explain"]).output
            return explained.contains("download deferred")
        }
        #expect(explained.contains("downloads are held until"), "\(explained)")
        let status = try await rig.status()
        #expect(status.pending == nil && status.current == .installed("1.0.0"), "nothing downloaded while the page holds: \(status)")

        let url = serve.baseURL + "__clientctl/hold-downloads"
        let json = ["X-Clientctl-Shim: 1", "Content-Type: application/json"]
        let body = Data(#"{"lease":"backup","seconds":60}"#.utf8)
        let foreign = try await Curl.request(url, method: "POST", headers: json + ["Origin: http://evil.example.com"], body: body)
        #expect(foreign.status == 403, "another origin is refused: \(foreign.status) \(foreign.body)")
        let local = try await Curl.request(url, method: "POST", headers: json, body: body)
        #expect(local.status == 200 && local.body.contains("\"until\""), "a local process holds: \(local.status)")
        #expect(serve.stop(SIGTERM) == 0, "\(serve.stderr)")
    }
}

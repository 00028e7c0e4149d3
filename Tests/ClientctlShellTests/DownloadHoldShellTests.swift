import Foundation
import TestSupport
import Testing

/// `WebAppLocalServer.holdDownloads(seconds)` in the native shell
/// (docs/download-policy.md#holds), in a real window under Xvfb: the page's hold defers the
/// download of a release its own check finds, and the hold dies with the page's web process.
@Suite(.serialized)
struct DownloadHoldShellTests {
    static let green = "#00a000"

    @Test func aPagesHoldDefersTheDownloadAndDiesWithItsWebProcess() async throws {
        let rig = try await ReleaseRig(startupTimeout: 30, label: "download-hold")
        // The first load holds downloads for ten minutes, then checks; a reloaded page only checks.
        let holding = """
            WebAppLocalServer.startupDidComplete(function () {
              var first = !localStorage.getItem('held');
              localStorage.setItem('held', '1');
              (first ? WebAppLocalServer.holdDownloads(600) : Promise.resolve()).then(function () { WebAppLocalServer.checkForUpdates(); });
            });
            """
        try await rig.publish("1.0.0", script: ShellHarness.paint(Self.green, then: holding))
        try await rig.run(["install", "--root", rig.root])
        try await rig.publish("1.1.0", script: ShellHarness.paint(Self.green, then: ReleaseRig.acknowledging))
        let shell = try RunningShell(root: rig.root, exitAfter: 300, arguments: ["--check-interval", "0"], scratch: rig.tmp.path)
        var explained = ""
        try await Poll.until("the page's check deferred by its hold", timeout: 120) {
            explained = try await rig.run(["status", "--root", rig.root, "--explain"]).output
            return explained.contains("download deferred")
        }
        #expect(explained.contains("downloads are held until"), "\(explained)")
        #expect(
            !shell.events.contains { $0.event == "updateAvailable" && $0.version == "1.1.0" },
            "nothing downloaded while the page holds: \(shell.events.map(\.description))")
        // The page's web process dies: its hold with it. The reloaded page checks and downloads.
        let victims = shell.webProcesses
        #expect(!victims.isEmpty, "a web process runs")
        for pid in victims { kill(pid, SIGKILL) }
        try await shell.waitFor("1.1.0 downloaded", timeout: 120) { $0.contains { $0.event == "updateAvailable" && $0.version == "1.1.0" } }
        let run = try await shell.terminate()
        #expect(run.status == 0, "\(run.summary)")
    }
}

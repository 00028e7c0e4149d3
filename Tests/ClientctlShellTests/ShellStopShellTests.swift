import Foundation
import TestSupport
import Testing

/// Ending the shell (SIGTERM, as `systemctl stop`) while the engine is busy: the run still
/// ends in order. In `NativeShellTests` so that one window runs at a time.
extension NativeShellTests {
    /// SIGTERM as the page switches to a new version: the engine's shutdown waits for the
    /// switch, whose reload of the view runs on GTK's main thread, so the shell keeps that
    /// thread's loop running until the shutdown is done. (It blocked it, and hung until
    /// killed, when the stop came before the switch's reload had run.) Three rounds, each
    /// stopped as the new version is announced, when the page's switch is under way.
    @Test func aStopDuringASwitchEndsInOrder() async throws {
        let rig = try await ReleaseRig(startupTimeout: 10, label: "shell-stop-switch")
        let switching = """
            WebAppLocalServer.onNewVersionReady(function () { WebAppLocalServer.switchToPendingVersion(); });
            WebAppLocalServer.startupDidComplete(function () { WebAppLocalServer.checkForUpdates(); });
            """
        try await rig.publish("1.0.0", script: ShellHarness.paint(Self.green, then: switching))
        for round in 1...3 {
            try await rig.run(["install", "--root", rig.root])
            try await rig.publish("1.\(round).0", script: ShellHarness.paint(Self.blue, then: switching))
            let shell = try RunningShell(root: rig.root, exitAfter: 300, arguments: ["--check-interval", "0"], scratch: rig.tmp.path)
            let run = try await shell.stop(when: "1.\(round).0 announced") {
                $0.contains { $0.event == "updateAvailable" && $0.version == "1.\(round).0" }
            }
            #expect(run.status == 0, "round \(round): \(run.summary)")
            #expect(run.events.last?.event == "stopped", "round \(round): \(run.summary)")
        }
    }
}

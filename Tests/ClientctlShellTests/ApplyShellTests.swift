import Foundation
import TestSupport
import Testing

/// Apply policies in the native shell (docs/apply-policies.md#the-native-shell), in a real
/// window under Xvfb with real input from `xdotool` (Debian's xdotool: X's XTEST events,
/// as a mouse would send them): idle is measured from the window's own input events, a
/// page's lease dies with its web process, a link click is the next navigation, and `now`
/// waits for a running trial. The page of the new version acknowledging its trial is the
/// proof that the shell loaded it.
@Suite(.serialized)
struct ApplyShellTests {
    static let green = "#00a000"
    static let blue = "#0000c8"

    /// `xdotool ARGS…` on the shell's display (its DISPLAY and XAUTHORITY from /proc).
    static func xdotool(_ shell: RunningShell, _ arguments: [String]) async throws -> String {
        let pid = try #require(shell.shellPID, "the shell runs")
        let environ = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/environ"))
        let variables = environ.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            .filter { $0.hasPrefix("DISPLAY=") || $0.hasPrefix("XAUTHORITY=") }
        let result = try await Subprocess.run("/usr/bin/env", variables + ["xdotool"] + arguments, gate: nil)
        #expect(result.status == 0, "xdotool \(arguments): \(result.errorOutput)")
        return result.output
    }

    /// The shell's window (the first visible one named after the app).
    static func window(_ shell: RunningShell) async throws -> String {
        let pid = try #require(shell.shellPID)
        let ids = try await xdotool(shell, ["search", "--sync", "--onlyvisible", "--pid", String(pid), "--name", "com.example"])
        return try #require(ids.split(separator: "\n").first.map(String.init), "the shell's window")
    }

    static func trialStarted(_ version: String) -> ([ShellHarness.Event]) -> Bool {
        { events in events.contains { $0.kind == "trialStarted" && $0.version == version } }
    }

    @Test func idleSwitchesOnlyOnceTheWindowSawNoInputForTheIdleTime() async throws {
        let rig = try await ReleaseRig(startupTimeout: 30, label: "apply-idle")
        // 1.0.0 asks for updates at the first pointer move over its page: 1.1.0 is staged
        // while the user is already working, however long the window took to appear on a
        // loaded host (a check at start-up let the idle time run out before the first move).
        let checking = """
            WebAppLocalServer.startupDidComplete(function () {
              document.addEventListener('mousemove', function () { WebAppLocalServer.checkForUpdates(); }, { once: true });
            });
            """
        try await rig.publish("1.0.0", script: ShellHarness.paint(Self.green, then: checking))
        try await rig.run(["install", "--root", rig.root])
        try await rig.publish(
            "1.1.0", script: ShellHarness.paint(Self.blue, then: ReleaseRig.acknowledging), arguments: ["--apply", "idle", "--idle-seconds", "8"])
        let shell = try RunningShell(root: rig.root, exitAfter: 300, arguments: ["--check-interval", "0"], scratch: rig.tmp.path)
        try await shell.waitFor("1.0.0 committed", timeout: 120) { $0.contains { $0.kind == "committed" && $0.version == "1.0.0" } }
        // Busy for three times the idle time: the pointer moves over the window every half
        // second, 48 moves chained in one xdotool process (its own `sleep` between them), so
        // the gaps are xdotool's sleeps and not the start of a process each, which a loaded
        // host (load above 40) stretched past the idle time.
        let window = try await Self.window(shell)
        let moves = (0..<48).flatMap { step in
            ["mousemove", "--window", window, String(100 + (step % 2) * 200), "300", "sleep", "0.5"]
        }
        let busy = ContinuousClock.now
        _ = try await Self.xdotool(shell, moves)
        #expect(
            shell.events.contains { $0.event == "updateAvailable" && $0.version == "1.1.0" },
            "1.1.0 was staged while the pointer moved: \(shell.events.map(\.description))")
        #expect(!Self.trialStarted("1.1.0")(shell.events), "no switch while the user works: \(shell.events.map(\.description))")
        try await shell.waitFor("1.1.0 committed", timeout: 300) { $0.contains { $0.kind == "committed" && $0.version == "1.1.0" } }
        // The last move came after 47 sleeps of 0.5 s at least: idle time counts from no earlier.
        let switchedAfter = ContinuousClock.now - (busy + .milliseconds(23_500))
        #expect(switchedAfter > .milliseconds(7_900), "it waited for 8 s without input (xdotool's last event counts): \(switchedAfter)")
        let run = try await shell.terminate()
        #expect(run.status == 0, "\(run.summary)")
        let reports = try await rig.status()
        #expect(reports.lastKnownGood == "1.1.0" && reports.apply == nil)
    }

    @Test func aLeaseDiesWithItsWebProcessAndTheSwitchFollows() async throws {
        let rig = try await ReleaseRig(startupTimeout: 30, label: "apply-lease")
        // The page holds a lease once (a flag in its storage) and asks for updates.
        let holding = """
            WebAppLocalServer.startupDidComplete(function () {
              var first = !localStorage.getItem('held');
              localStorage.setItem('held', '1');
              (first ? WebAppLocalServer.holdUpdate(600) : Promise.resolve()).then(function () { WebAppLocalServer.checkForUpdates(); });
            });
            """
        try await rig.publish("1.0.0", script: ShellHarness.paint(Self.green, then: holding))
        try await rig.run(["install", "--root", rig.root])
        try await rig.publish("1.1.0", script: ShellHarness.paint(Self.blue, then: ReleaseRig.acknowledging), arguments: ["--apply", "now"])
        let shell = try RunningShell(root: rig.root, exitAfter: 300, arguments: ["--check-interval", "0"], scratch: rig.tmp.path)
        try await shell.waitFor("1.1.0 staged", timeout: 120) { $0.contains { $0.event == "updateAvailable" && $0.version == "1.1.0" } }
        let held = try await rig.waitForStatus(timeout: 30) { $0.apply?.contains("a page holds a lease until") == true }
        #expect(held.current == .installed("1.0.0"), "mode now, but the page holds it back")
        #expect(!Self.trialStarted("1.1.0")(shell.events))
        // The page's web process dies: its lease with it. The reloaded page holds none.
        let victims = shell.webProcesses
        #expect(!victims.isEmpty, "a web process runs")
        for pid in victims { kill(pid, SIGKILL) }
        try await shell.waitFor("1.1.0 committed", timeout: 120) { $0.contains { $0.kind == "committed" && $0.version == "1.1.0" } }
        let run = try await shell.terminate()
        #expect(run.status == 0, "\(run.summary)")
    }

    @Test func nextNavigationSwitchesOnALinkClick() async throws {
        let rig = try await ReleaseRig(startupTimeout: 30, label: "apply-navigation")
        // A link (to the app's own start page, where the shim is) that fills the page: a
        // click anywhere follows it.
        let linked = """
            var a = document.createElement('a'); a.href = '/?clicked=1'; a.id = 'next'; a.textContent = 'next';
            a.style.cssText = 'position:fixed;left:0;top:0;width:100%;height:100%;display:block';
            document.body.appendChild(a);
            WebAppLocalServer.startupDidComplete(function () { WebAppLocalServer.checkForUpdates(); });
            """
        try await rig.publish("1.0.0", script: ShellHarness.paint(Self.green, then: linked))
        try await rig.run(["install", "--root", rig.root])
        try await rig.publish(
            "1.1.0", script: ShellHarness.paint(Self.blue, then: ReleaseRig.acknowledging), arguments: ["--apply", "next-navigation"])
        let shell = try RunningShell(root: rig.root, exitAfter: 300, arguments: ["--check-interval", "0"], scratch: rig.tmp.path)
        try await shell.waitFor("1.1.0 staged", timeout: 120) { $0.contains { $0.event == "updateAvailable" && $0.version == "1.1.0" } }
        _ = try await rig.waitForStatus(timeout: 30) { $0.apply?.contains("waiting for the page's next navigation") == true }
        #expect(!Self.trialStarted("1.1.0")(shell.events), "no navigation, no switch")
        let window = try await Self.window(shell)
        _ = try await Self.xdotool(shell, ["mousemove", "--window", window, "400", "300", "click", "1"])
        let events = try await shell.waitFor("1.1.0 committed", timeout: 120) {
            $0.contains { $0.kind == "committed" && $0.version == "1.1.0" }
        }
        #expect(events.contains { $0.event == "switchedOnNavigation" && $0.version == "1.1.0" }, "\(events.map(\.description))")
        let run = try await shell.terminate()
        #expect(run.status == 0, "\(run.summary)")
        #expect(try await rig.status().lastKnownGood == "1.1.0")
        #expect(events.contains { $0.event == "watchdog" && $0.kind == "failed" } == false, "\(events.map(\.description))")
    }

    @Test func nowDuringATrialWaitsForTheTrialsEnd() async throws {
        let rig = try await ReleaseRig(startupTimeout: 30, label: "apply-now-trial")
        // 1.0.0 is on trial at start; it asks for updates first and acknowledges 3 s later.
        let slow = "WebAppLocalServer.checkForUpdates(); setTimeout(function () { WebAppLocalServer.startupDidComplete(); }, 3000);"
        try await rig.publish("1.0.0", script: ShellHarness.paint(Self.green, then: slow))
        try await rig.run(["install", "--root", rig.root])
        try await rig.publish("1.1.0", script: ShellHarness.paint(Self.blue, then: ReleaseRig.acknowledging), arguments: ["--apply", "now"])
        let run = try await ShellHarness.run(root: rig.root, until: "1.1.0 committed", arguments: ["--check-interval", "0"]) { events in
            events.contains { $0.kind == "committed" && $0.version == "1.1.0" }
        }
        let order = run.events.compactMap { event -> String? in
            switch (event.event, event.kind) {
            case ("updateAvailable", _): return "staged \(event.version ?? "")"
            case ("watchdog", "committed"), ("watchdog", "trialStarted"): return "\(event.kind ?? "") \(event.version ?? "")"
            default: return nil
            }
        }
        #expect(order == ["trialStarted 1.0.0", "staged 1.1.0", "committed 1.0.0", "trialStarted 1.1.0", "committed 1.1.0"], "\(run.summary)")
    }
}

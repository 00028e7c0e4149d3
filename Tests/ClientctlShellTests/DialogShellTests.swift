import Foundation
import TestSupport
import Testing

/// Dialogs a page can raise (issue 34, docs/native-shell.md#dialogs): none in a kiosk,
/// and outside one never past the page that opened it or in the way of a shutdown; and
/// nothing written in the user's home. Real pages in real windows under Xvfb, in
/// `NativeShellTests` so that one window runs at a time.
extension NativeShellTests {
    /// Calls every dialog a page has, then paints green if each returned as a kiosk must
    /// answer it (`confirm` false, `prompt` null), red otherwise, and acknowledges.
    static let everyDialog = """
        window.print();
        alert('an alert');
        var confirmed = confirm('a confirm'), prompted = prompt('a prompt', 'default');
        for (var i = 0; i < 500; i++) alert('again ' + i);
        var colour = confirmed === false && prompted === null ? '\(green)' : '\(red)';
        document.documentElement.style.background = colour; document.body.style.background = colour;
        WebAppLocalServer.startupDidComplete();
        """

    /// In `--kiosk`, `print()` opens no print dialog (GTK's would run a nested main loop
    /// that holds `print()` and SIGTERM) and `alert`, `confirm` and `prompt` return at once:
    /// the page goes on, commits and paints; the refusals are counted in a few
    /// `dialogRefused` lines, not one per call; no window but the shell's is on the display;
    /// SIGTERM ends the shell in order. Without the handlers the page stops in `print()`
    /// and its trial never commits.
    @Test func aKioskOpensNoDialogAndThePageGoesOn() async throws {
        let rig = try await ReleaseRig(startupTimeout: 15, label: "shell-kiosk-dialogs")
        try await rig.publish("1.0.0", script: Self.everyDialog)
        try await rig.run(["install", "--root", rig.root])
        let shot = rig.tmp("shot.png")
        let shell = try RunningShell(root: rig.root, exitAfter: 120, arguments: ["--kiosk", "--snapshot", shot], scratch: rig.tmp.path)
        try await shell.waitFor("the commit's snapshot", timeout: 60) { $0.contains { $0.event == "snapshot" } }
        let windows = try await shell.visibleWindows()
        let run = try await shell.stop(when: "the refusals reported") { events in
            events.contains { $0.event == "dialogRefused" && ($0.alert ?? 0) == 501 }
        }
        #expect(run.status == 0 && run.events.last?.event == "stopped", "\(run.summary)")
        #expect(run.watchdog("committed", "1.0.0") != nil, "\(run.summary)")
        try await Self.expectColour(shot, Self.green)
        let counted = try #require(run.events.last { $0.event == "dialogRefused" }, "\(run.summary)")
        #expect(counted.print == 1 && counted.alert == 501 && counted.confirm == 1 && counted.prompt == 1, "\(run.summary)")
        #expect(run.events.filter { $0.event == "dialogRefused" }.count < 20, "coalesced: \(run.summary)")
        #expect(!run.events.contains { $0.event == "dialogOpened" }, "\(run.summary)")
        #expect(windows.count == 1, "only the shell's window is on the display: \(windows)")
    }

    /// Without `--kiosk`, a page's `alert` opens the shell's own dialog (a window of its
    /// own on the display) — and a trial that opened it and never acknowledges is rolled
    /// back at its timeout with the dialog closed: the good version is on screen and no
    /// dialog is left. Then a dialog open at SIGTERM does not hold the shell: it closes and
    /// the shell stops in order.
    @Test func aPageDialogNeverOutlivesItsPageOrHoldsAShutdown() async throws {
        let rig = try await Self.committedRig(startupTimeout: 4, label: "shell-dialogs")
        try await rig.publish("1.1.0", script: ShellHarness.paint(Self.red, then: "alert('the trial asks');"))  // never acknowledges
        try await rig.run(["install", "--root", rig.root])
        let shot = rig.tmp("shot.png")
        let shell = try RunningShell(root: rig.root, exitAfter: 120, arguments: ["--snapshot", shot, "--check-interval", "0"], scratch: rig.tmp.path)
        try await shell.waitFor("the trial's alert") { $0.contains { $0.event == "dialogOpened" && $0.kind == "alert" } }
        let during = try await shell.visibleWindows()
        #expect(during.count == 2, "the shell's window and its dialog: \(during)")
        try await shell.waitFor("the rollback's snapshot") { events in
            events.contains { $0.event == "watchdog" && $0.kind == "failed" && $0.version == "1.1.0" }
                && events.contains { $0.event == "snapshot" && $0.version == "1.0.0" }
        }
        let after = try await shell.visibleWindows()
        let run = try await shell.terminate()
        #expect(run.status == 0 && run.events.last?.event == "stopped", "\(run.summary)")
        let closed = try #require(run.events.first { $0.event == "dialogClosed" }, "\(run.summary)")
        #expect(closed.kind == "alert" && closed.reason == "page-replaced", "\(run.summary)")
        #expect(after.count == 1, "the dialog is gone with its page: \(after)")
        try await Self.expectColour(shot, Self.green)

        // 1.0.0 asks once it is committed; SIGTERM comes while the dialog is open.
        try await rig.publish(
            "1.2.0",
            script: ShellHarness.paint(Self.green, then: ReleaseRig.acknowledging + "setTimeout(function () { alert('open at stop'); }, 300);"))
        try await rig.run(["install", "--root", rig.root])
        let again = try RunningShell(root: rig.root, exitAfter: 120, arguments: ["--check-interval", "0"], scratch: rig.tmp.path)
        let stopped = try await again.stop(when: "the dialog open after the commit") { events in
            events.contains { $0.kind == "committed" && $0.version == "1.2.0" } && events.contains { $0.event == "dialogOpened" }
        }
        #expect(stopped.status == 0 && stopped.events.last?.event == "stopped", "SIGTERM ends the shell in order: \(stopped.summary)")
        #expect(stopped.events.contains { $0.event == "dialogClosed" && $0.reason == "stopping" }, "\(stopped.summary)")
    }

    /// Nothing the shell's libraries keep for themselves lands in the user's home: with an
    /// empty `HOME` and no `XDG_RUNTIME_DIR` (GStreamer's registry and dconf's runtime
    /// folder went to `~/.cache`), a run that plays a sound leaves the home empty, and the
    /// caches are under the root.
    @Test func aRunWritesNothingInTheUsersHome() async throws {
        let rig = try await ReleaseRig(startupTimeout: 10, label: "shell-home")
        let media =
            "var a = new Audio(); a.src = 'data:audio/wav;base64,UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA='; a.play().catch(function () {});"
        try await rig.publish("1.0.0", script: ShellHarness.paint(Self.green, then: media + ReleaseRig.acknowledging))
        try await rig.run(["install", "--root", rig.root])
        let home = rig.tmp("home")
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        let shell = try RunningShell(
            root: rig.root, exitAfter: 120, environment: ["HOME": home, "XDG_CACHE_HOME": "", "XDG_CONFIG_HOME": "", "XDG_RUNTIME_DIR": ""],
            scratch: rig.tmp.path)
        let run = try await shell.stop(when: "the commit") { $0.contains { $0.kind == "committed" && $0.version == "1.0.0" } }
        #expect(run.status == 0, "\(run.summary)")
        let written = FileManager.default.enumerator(atPath: home)?.compactMap { $0 as? String } ?? []
        #expect(written.isEmpty, "the home stays empty: \(written)")
        let cached = FileManager.default.enumerator(atPath: rig.root + "/shell/xdg-cache")?.compactMap { $0 as? String } ?? []
        #expect(cached.contains { $0.hasPrefix("gstreamer-1.0") }, "GStreamer's registry under the root: \(cached)")
    }
}

extension NativeShellTests {
    /// A page that posts 3,000 unknown actions gets each refused and counted
    /// (`callRefused`), with a few `error` lines and then one a second, not 3,000; and a
    /// frame posting five 100 MB messages sends none of them to the shell (every frame's
    /// `postMessage` is wrapped): they are refused as `notTopFrame` and the shell's peak
    /// memory stays where the top page's flood keeps it.
    @Test func refusedCallsAreCountedAndTheirLinesThrottled() async throws {
        let rig = try await ReleaseRig(startupTimeout: 10, label: "shell-refused-calls")
        let frame =
            "<script>var h = window.webkit.messageHandlers.clientctl, big = 'x'.repeat(100 * 1024 * 1024), left = 5;"
            + "for (var j = 0; j < 5; j++) h.postMessage({ action: 'status', pad: big }).catch(function () { if (--left === 0) parent.postMessage('done', '*'); });<\\/script>"
        let page = """
            WebAppLocalServer.startupDidComplete();
            var h = window.webkit.messageHandlers.clientctl, n = 0;
            window.addEventListener('message', function (e) {
              if (e.data !== 'done') return;
              document.documentElement.style.background = '\(Self.green)'; document.body.style.background = '\(Self.green)';
            });
            function frames() { var f = document.createElement('iframe'); f.srcdoc = "\(frame)"; document.body.appendChild(f); }
            function next() { if (n++ < 3000) h.postMessage({ action: 'nope' }).then(next, next); else frames(); }
            next();
            """
        try await rig.publish("1.0.0", script: ShellHarness.paint(Self.red, then: page))
        try await rig.run(["install", "--root", rig.root])
        let shell = try RunningShell(root: rig.root, exitAfter: 300, scratch: rig.tmp.path)
        try await shell.waitFor("every refusal counted", timeout: 240) { events in
            events.contains { $0.event == "bridgeRefused" && $0.callRefused == 3000 && $0.notTopFrame == 5 }
        }
        let peak = try #require(shell.shellPeakKiB, "the shell's VmHWM")
        let run = try await shell.terminate()
        #expect(run.status == 0, "\(run.summary)")
        let lines = run.events.filter { $0.event == "error" }
        #expect(lines.count >= 1 && lines.count < 60, "a few error lines, not one per call: \(lines.count)")
        #expect(lines.first?.message?.contains("unknown action 'nope'") == true, "\(run.summary)")
        #expect(peak < 640 * 1024, "the shell's peak resident memory: \(peak) KiB")
    }
}

extension RunningShell {
    /// The shell's visible, named windows on its X display (`xdotool search --onlyvisible
    /// --pid`, Debian's xdotool), as "id name": what a person in front of it would see
    /// (GTK's unnamed helper windows left out; GTK's print dialog is named "Print").
    func visibleWindows() async throws -> [String] {
        let shell = try #require(shellPID, "the shell runs")
        let environ = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(shell)/environ"))
        let variables = environ.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            .filter { $0.hasPrefix("DISPLAY=") || $0.hasPrefix("XAUTHORITY=") }
        let result = try await Subprocess.run(
            "/usr/bin/env", variables + ["xdotool", "search", "--onlyvisible", "--pid", String(shell), "--name", ""], gate: nil)
        var windows: [String] = []
        for id in result.output.split(separator: "\n") {
            let name = try await Subprocess.run("/usr/bin/env", variables + ["xdotool", "getwindowname", String(id)], gate: nil)
            let title = name.output.trimmingCharacters(in: .whitespacesAndNewlines)
            if !title.isEmpty { windows.append("\(id) \(title)") }
        }
        return windows
    }
}

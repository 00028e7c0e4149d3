import Foundation
import TestSupport
import Testing

/// A hostile or broken page never leaves a blank window (issue 28,
/// docs/native-shell.md#a-page-that-dies): its web process killed before or after the
/// acknowledgement, killed again and again, or hung; iframes and floods at the bridge;
/// new windows, downloads and foreign documents. Real pages in real windows under Xvfb,
/// in `NativeShellTests` so that one window runs at a time.
extension NativeShellTests {
    /// Publishes 1.0.0 (green, acknowledging) and commits it in a first run.
    static func committedRig(startupTimeout: Double, label: String) async throws -> ReleaseRig {
        let rig = try await ReleaseRig(startupTimeout: startupTimeout, label: label)
        try await rig.publish("1.0.0", script: ShellHarness.paint(green, then: ReleaseRig.acknowledging))
        try await rig.run(["install", "--root", rig.root])
        let first = try await ShellHarness.run(root: rig.root, until: "1.0.0 committed") { $0.contains { $0.kind == "committed" } }
        #expect(first.watchdog("committed", "1.0.0") != nil, "\(first.summary)")
        return rig
    }

    /// After `--fresh-process-after` loads of the app's page, the next load gets a new web
    /// process: the switch to 1.1.0 ends 1.0.0's process (reported as `fresh-process`, not
    /// as a death: no trial fails, nothing is reloaded) and 1.1.0 loads, acknowledges and
    /// paints in another one, and reads what 1.0.0 stored. A kiosk's web process so never
    /// grows over months of switches.
    @Test func aSwitchLoadsInAFreshWebProcessAfterItsLoads() async throws {
        let rig = try await ReleaseRig(startupTimeout: 10, label: "shell-fresh-process")
        let checking = """
            localStorage.setItem('kept', 'yes');
            WebAppLocalServer.startupDidComplete(function () { setTimeout(function () { WebAppLocalServer.checkForUpdates(); }, 1500); });
            WebAppLocalServer.onNewVersionReady(function () { WebAppLocalServer.switchToPendingVersion(); });
            """
        try await rig.publish("1.0.0", script: ShellHarness.paint(Self.green, then: checking))
        try await rig.run(["install", "--root", rig.root])
        let reading = """
            var colour = localStorage.getItem('kept') === 'yes' ? '\(Self.blue)' : '\(Self.red)';
            document.documentElement.style.background = colour; document.body.style.background = colour;
            WebAppLocalServer.startupDidComplete();
            """
        try await rig.publish("1.1.0", script: reading)
        let shot = rig.tmp("shot.png")
        let shell = try RunningShell(
            root: rig.root, exitAfter: 180, arguments: ["--snapshot", shot, "--check-interval", "0", "--fresh-process-after", "1"],
            scratch: rig.tmp.path)
        _ = try await shell.waitFor("1.0.0 committed") { $0.contains { $0.kind == "committed" && $0.version == "1.0.0" } }
        let before = shell.webProcesses
        _ = try await shell.waitFor("1.1.0 committed") { $0.contains { $0.kind == "committed" && $0.version == "1.1.0" } }
        let after = shell.webProcesses
        let run = try await shell.stop(when: "1.1.0's snapshot") { $0.contains { $0.event == "snapshot" && $0.version == "1.1.0" } }
        #expect(run.status == 0, "\(run.summary)")
        #expect(before.count == 1 && after.count == 1 && before != after, "a new web process for 1.1.0: \(before) → \(after)")
        let ended = run.events.filter { $0.event == "webProcessTerminated" }
        #expect(ended.count == 1 && ended.first?.reason == "fresh-process" && ended.first?.version == "1.0.0", "\(run.summary)")
        #expect(!run.events.contains { $0.event == "error" } && run.watchdog("failed", "1.1.0") == nil, "\(run.summary)")
        #expect(run.lastSnapshot?.version == "1.1.0", "\(run.summary)")
        try await Self.expectColour(shot, Self.blue)
    }

    /// Sends SIGKILL to the shell's web process (it must have one).
    static func killWebProcess(of shell: RunningShell) throws {
        let processes = shell.webProcesses
        #expect(processes.count == 1, "one web process: \(processes)")
        let pid = try #require(processes.first, "the shell has a WebKitWebProcess child")
        #expect(kill(pid, SIGKILL) == 0)
    }

    /// The trial's page dies before it acknowledged: the trial fails at once (not at its
    /// 30 s timeout) and the good version is shown again.
    @Test func aWebProcessKilledBeforeTheAcknowledgementIsAFailedTrial() async throws {
        let rig = try await Self.committedRig(startupTimeout: 30, label: "shell-kill-trial")
        try await rig.publish("1.1.0", script: ShellHarness.paint(Self.red))  // never acknowledges
        try await rig.run(["install", "--root", rig.root])
        let shot = rig.tmp("shot.png")
        let shell = try RunningShell(root: rig.root, exitAfter: 180, arguments: ["--snapshot", shot], scratch: rig.tmp.path)
        // The page of 1.1.0 is on screen (its first paint): its web process dies.
        try await shell.waitFor("the trial's first paint") { events in
            events.contains { $0.event == "firstPaint" } && events.contains { $0.kind == "trialStarted" && $0.version == "1.1.0" }
        }
        try Self.killWebProcess(of: shell)
        let run = try await shell.stop(when: "the death and a snapshot of 1.0.0 after it") { events in
            guard let death = events.firstIndex(where: { $0.event == "webProcessTerminated" }) else { return false }
            return events[death...].contains { $0.event == "snapshot" && $0.version == "1.0.0" }
        }
        #expect(run.status == 0, "\(run.summary)")
        let death = try #require(run.events.first { $0.event == "webProcessTerminated" }, "\(run.summary)")
        #expect(death.reason == "crashed" && death.version == "1.1.0" && death.trialFailed == true, "\(run.summary)")
        let failed = try #require(run.watchdog("failed", "1.1.0"), "\(run.summary)")
        #expect(failed.reason == "page-crashed" && failed.revertedTo == "1.0.0", "not the 30 s timeout: \(run.summary)")
        #expect(run.lastSnapshot?.version == "1.0.0", "\(run.summary)")
        try await Self.expectColour(shot, Self.green)
        let status = try await rig.status()
        #expect(status.current == .installed("1.0.0") && status.retry == ["1.1.0"])
    }

    /// A committed version's page dies: the shell reloads it and it shows again (the page
    /// paints blue at its first load, green at the next: localStorage counts its loads).
    @Test func aWebProcessKilledAfterTheCommitIsReloaded() async throws {
        let rig = try await ReleaseRig(startupTimeout: 10, label: "shell-kill-committed")
        let counting = """
            var loads = Number(localStorage.getItem('loads') || '0') + 1;
            localStorage.setItem('loads', String(loads));
            var colour = loads === 1 ? '\(Self.blue)' : '\(Self.green)';
            document.documentElement.style.background = colour; document.body.style.background = colour;
            WebAppLocalServer.startupDidComplete();
            """
        try await rig.publish("1.0.0", script: counting)
        try await rig.run(["install", "--root", rig.root])
        let shot = rig.tmp("shot.png")
        let shell = try RunningShell(root: rig.root, exitAfter: 120, arguments: ["--snapshot", shot], scratch: rig.tmp.path)
        try await shell.waitFor("the commit's snapshot") { $0.contains { $0.event == "snapshot" } }
        try await Self.expectColour(shot, Self.blue)
        try Self.killWebProcess(of: shell)
        let run = try await shell.stop(when: "the death and a snapshot after it") { events in
            guard let death = events.firstIndex(where: { $0.event == "webProcessTerminated" }) else { return false }
            return events[death...].contains { $0.event == "snapshot" }
        }
        #expect(run.watchdog("committed", "1.0.0") != nil, "\(run.summary)")
        let death = try #require(run.events.first { $0.event == "webProcessTerminated" }, "\(run.summary)")
        #expect(death.reason == "crashed" && death.version == "1.0.0" && death.deaths == 1 && death.reloadInMs == 1000, "\(run.summary)")
        #expect(run.watchdog("failed", "1.0.0") == nil, "a committed version is not rolled back: \(run.summary)")
        let reloaded = try #require(run.lastSnapshot, "\(run.summary)")
        #expect(reloaded.ms > death.ms && reloaded.version == "1.0.0", "a snapshot after the reload: \(run.summary)")
        try await Self.expectColour(shot, Self.green)
        #expect(!run.events.contains { $0.event == "error" }, "\(run.summary)")
    }

    /// A committed page that keeps dying is reloaded after 1, 2 and 4 s; the fourth death
    /// in a row is reported (event and stderr) and the next reload waits 300 s.
    @Test func aPageThatKeepsDyingIsReportedAndNotReloadedInALoop() async throws {
        let rig = try await Self.committedRig(startupTimeout: 10, label: "shell-kill-again")
        let shot = rig.tmp("shot.png")
        let shell = try RunningShell(root: rig.root, exitAfter: 300, arguments: ["--snapshot", shot], scratch: rig.tmp.path)
        for death in 1...4 {
            // Each time the page is on screen again (its acknowledgement's snapshot): a web
            // process that is still starting is never killed (WebKit aborts the shell then).
            try await shell.waitFor("snapshot \(death)") { $0.filter { $0.event == "snapshot" }.count >= death }
            try Self.killWebProcess(of: shell)
            try await shell.waitFor("death \(death)") { $0.contains { $0.event == "webProcessTerminated" && $0.deaths == death } }
        }
        // The fourth death is reported; then 10 s in which no reload may come (the backoff's
        // next step would be 8 s; the shell's is 300 s): an observed absence, not a wait.
        try await shell.waitFor("the report of the fourth death") { $0.contains { $0.event == "error" } }
        try await WorldTime.pass(.seconds(10), "a window in which a real shell must not reload")
        let run = try await shell.terminate()
        #expect(run.status == 0, "\(run.summary)")
        let deaths = run.events.filter { $0.event == "webProcessTerminated" }
        #expect(deaths.map(\.reloadInMs) == [1000, 2000, 4000, 300_000], "\(run.summary)")
        #expect(deaths.allSatisfy { $0.reason == "crashed" && $0.trialFailed == nil }, "\(run.summary)")
        let reported = run.events.filter { $0.event == "error" }
        #expect(reported.count == 1 && reported.first?.message?.contains("stopped 4 times in a row") == true, "\(run.summary)")
        #expect(run.stderr.contains("clientctl-shell: the page of 1.0.0 stopped 4 times in a row (crashed)"), "\(run.summary)")
        #expect(run.events.filter { $0.event == "snapshot" }.count == 4, "no reload after the fourth death: \(run.summary)")
    }

    /// A trial whose page hangs its JavaScript thread (`while (true) {}`) is rolled back at
    /// its timeout, and the good version is shown: the hung web process is ended for it.
    @Test func aHungPageIsRolledBackAtItsTimeoutAndTheGoodVersionShown() async throws {
        let rig = try await Self.committedRig(startupTimeout: 2, label: "shell-hung")
        try await rig.publish("1.1.0", script: ShellHarness.paint(Self.red, then: "setTimeout(function () { while (true) {} }, 50);"))
        try await rig.run(["install", "--root", rig.root])
        let shot = rig.tmp("shot.png")
        let run = try await ShellHarness.run(
            root: rig.root, until: "1.1.0 failed and a snapshot of 1.0.0 after it", arguments: ["--snapshot", shot]
        ) { events in
            guard let failed = events.firstIndex(where: { $0.event == "watchdog" && $0.kind == "failed" }) else { return false }
            return events[failed...].contains { $0.event == "snapshot" && $0.version == "1.0.0" }
        }
        let trial = try #require(run.watchdog("trialStarted", "1.1.0"), "\(run.summary)")
        let failed = try #require(run.watchdog("failed", "1.1.0"), "\(run.summary)")
        #expect(failed.reason == "timed-out" && failed.revertedTo == "1.0.0", "\(run.summary)")
        #expect(failed.ms - trial.ms <= 2000 + 3000, "at the 2 s timeout: \(failed.ms - trial.ms) ms")
        #expect(run.events.contains { $0.event == "webProcessTerminated" && $0.reason == "unresponsive" }, "\(run.summary)")
        #expect(run.lastSnapshot?.version == "1.0.0", "\(run.summary)")
        try await Self.expectColour(shot, Self.green)
    }

    /// Frames of the page (`srcdoc`, `data:`, `blob:`) post to their own message handler:
    /// refused and counted; the top page's own calls (its acknowledgement) work.
    @Test func onlyTheTopPageMayUseTheBridge() async throws {
        let rig = try await ReleaseRig(startupTimeout: 10, label: "shell-frames")
        let frame =
            "<script>window.webkit.messageHandlers.clientctl.postMessage({ action: 'failed:from a frame' })"
            + ".then(function () { parent.postMessage('accepted', '*'); }, function (e) { parent.postMessage('refused: ' + e.message, '*'); });<\\/script>"
        let page = """
            var answers = [];
            window.addEventListener('message', function (e) {
              answers.push(String(e.data));
              if (answers.length < 3) return;
              if (answers.every(function (a) { return a.indexOf("refused: messages are accepted only from the app's top-level page") === 0; })) {
                document.documentElement.style.background = '\(Self.green)'; document.body.style.background = '\(Self.green)';
                WebAppLocalServer.startupDidComplete();
              } else {
                window.webkit.messageHandlers.clientctl.postMessage({ action: 'failed:' + answers.join(',') }).catch(function () {});
              }
            });
            var html = "\(frame)";
            var a = document.createElement('iframe'); a.srcdoc = html; document.body.appendChild(a);
            var b = document.createElement('iframe'); b.src = 'data:text/html,' + encodeURIComponent(html); document.body.appendChild(b);
            var c = document.createElement('iframe'); c.src = URL.createObjectURL(new Blob([html], { type: 'text/html' })); document.body.appendChild(c);
            """
        try await rig.publish("1.0.0", script: ShellHarness.paint(Self.red, then: page))
        try await rig.run(["install", "--root", rig.root])
        let shot = rig.tmp("shot.png")
        let run = try await ShellHarness.run(root: rig.root, until: "the commit and its snapshot", arguments: ["--snapshot", shot]) { events in
            events.contains { $0.kind == "committed" } && events.contains { $0.event == "snapshot" }
        }
        let failed = run.events.first { $0.action?.hasPrefix("failed:") == true }
        #expect(failed == nil, "a frame's message reached the engine, or a frame was not refused: \(failed?.action ?? "")")
        #expect(run.watchdog("committed", "1.0.0") != nil, "the top page's own call works: \(run.summary)")
        let counted = try #require(run.events.last { $0.event == "bridgeRefused" }, "\(run.summary)")
        #expect(counted.notTopFrame == 3 && counted.total == 3, "\(run.summary)")
        #expect(!run.events.contains { $0.event == "navigationRefused" }, "the frames loaded: \(run.summary)")
        try await Self.expectColour(shot, Self.green)
    }
}

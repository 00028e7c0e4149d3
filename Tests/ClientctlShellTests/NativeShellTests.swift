import Foundation
import TestSupport
import Testing

/// `clientctl-shell` in a real window under Xvfb (docs/native-shell.md): what it shows
/// (pixels of its own `--snapshot`), its trial and rollback, the page bridge, navigation
/// and the lock it shares with `serve`. One window at a time: `xvfb-run -a` picks a free
/// display by probing, which two starting at once can both pick.
@Suite(.serialized)
struct NativeShellTests {
    static let green = "#00a000"
    static let blue = "#0000c8"
    static let red = "#c80000"

    /// Checks the pixel at 400,300 of `png` is `colour` (`#rrggbb`), within rounding.
    static func expectColour(_ png: String, _ colour: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let pixel = try await PNGImage.pixel(png, x: 400, y: 300)
        let hex = Array(colour.dropFirst())
        let want = stride(from: 0, to: 6, by: 2).map { Int(String(hex[$0...$0 + 1]), radix: 16) ?? -1 }
        let got = [pixel.red, pixel.green, pixel.blue]
        #expect(zip(got, want).allSatisfy { abs($0 - $1) <= 8 }, "pixel \(got), expected \(want) (\(colour))", sourceLocation: sourceLocation)
    }

    @Test func aGoodVersionRendersAndCommits() async throws {
        let rig = try await ReleaseRig(startupTimeout: 10, label: "shell-good")
        try await rig.publish("1.0.0", script: ShellHarness.paint(Self.green, then: ReleaseRig.acknowledging))
        try await rig.run(["install", "--root", rig.root])
        let shot = rig.tmp("shot.png")
        let run = try await ShellHarness.run(root: rig.root, until: "the commit, the first paint and a snapshot", arguments: ["--snapshot", shot]) {
            events in
            events.contains { $0.kind == "committed" } && events.contains { $0.event == "firstPaint" } && events.contains { $0.event == "snapshot" }
        }
        #expect(run.status == 0, "\(run.summary)")
        #expect(run.events.contains { $0.event == "started" && $0.version == "1.0.0" }, "\(run.summary)")
        #expect(run.watchdog("committed", "1.0.0") != nil, "the page's startupDidComplete reached the engine: \(run.summary)")
        #expect(run.events.contains { $0.event == "firstPaint" }, "\(run.summary)")
        #expect(run.lastSnapshot?.version == "1.0.0", "\(run.summary)")
        try await Self.expectColour(shot, Self.green)
        #expect(try await rig.status().lastKnownGood == "1.0.0")
        #expect(FileManager.default.fileExists(atPath: rig.root + "/shell/data"), "the view's storage lives in the root")
    }

    /// Under systemd (docs/native-shell.md#systemd): READY=1 once the version is on screen,
    /// STATUS naming it and its trial state, WATCHDOG=1 from GTK's main loop every 200 ms
    /// (WATCHDOG_USEC=400000); `systemctl stop`'s SIGTERM, or Ctrl-C's SIGINT, ends the run
    /// in order: STOPPING=1, the engine shut down (a stopped event), exit status 0.
    @Test(arguments: [SIGTERM, SIGINT])
    func systemdHearsReadyStatusWatchdogAndStopping(signal: Int32) async throws {
        let rig = try await ReleaseRig(startupTimeout: 10, label: "shell-notify-\(signal)")
        try await rig.publish("1.0.0", script: ShellHarness.paint(Self.green, then: ReleaseRig.acknowledging))
        try await rig.run(["install", "--root", rig.root])
        let listener = try NotifyListener(path: rig.tmp("notify.sock"))
        let shell = try RunningShell(
            root: rig.root, exitAfter: 120, environment: ["NOTIFY_SOCKET": listener.address, "WATCHDOG_USEC": "400000"],
            scratch: rig.tmp.path)
        try await shell.waitFor("the commit and the first paint") { events in
            events.contains { $0.kind == "committed" } && events.contains { $0.event == "firstPaint" }
        }
        _ = try await listener.wait(for: "three WATCHDOG=1") { $0.filter { $0["WATCHDOG"] == "1" }.count >= 3 }
        let run = try await shell.terminate(signal: signal)
        #expect(run.status == 0, "signal \(signal) ends the shell in order: \(run.summary)")
        #expect(run.events.last?.event == "stopped", "\(run.summary)")
        let messages = try await listener.wait(for: "STOPPING=1") { $0.contains { $0["STOPPING"] == "1" } }
        let ready = messages.filter { $0["READY"] == "1" }
        #expect(ready.count == 1, "\(listener.datagrams)")
        // The page acknowledges as it loads: its first paint may come before or after the commit.
        let readyStatus = ready.first?["STATUS"] ?? ""
        #expect(["showing 1.0.0 (trial)", "showing 1.0.0 (committed)"].contains(readyStatus), "\(listener.datagrams)")
        #expect(messages.last { $0["STATUS"] != nil }?["STATUS"] == "showing 1.0.0 (committed)", "\(listener.datagrams)")
        #expect(messages.filter { $0["WATCHDOG"] == "1" }.count >= 3, "\(listener.datagrams)")
        #expect(messages.last?["STOPPING"] == "1", "STOPPING=1 is the last word: \(listener.datagrams)")
    }

    /// The page checks serve's rules through the app scheme with `fetch` (client-side route
    /// fallback, MIME types, CSP, hashed-name caching, entity tags, byte ranges, 404) and
    /// paints green when every check held; a failed check is named in a refused message.
    @Test func theAppSchemeAppliesServesRules() async throws {
        let rig = try await ReleaseRig(startupTimeout: 10, label: "shell-rules")
        let csp = "default-src 'self' 'unsafe-inline'"
        let checks = """
            (async function () {
              var fails = [];
              async function check(name, url, init, ok) {
                try { var r = await fetch(url, Object.assign({ cache: 'no-store' }, init)); if (!(await ok(r))) fails.push(name); }
                catch (e) { fails.push(name + ':' + e.message); }
              }
              var h = function (r, n) { return r.headers.get(n) || ''; };
              await check('route', '/some/client/route', {}, async function (r) { return r.status === 200 && h(r, 'content-type').indexOf('text/html') === 0 && (await r.text()).indexOf('1.0.0') >= 0; });
              await check('css', '/style.css', {}, async function (r) { return r.status === 200 && h(r, 'content-type').indexOf('text/css') === 0 && h(r, 'cache-control') === 'no-cache'; });
              await check('csp', '/', {}, async function (r) { return h(r, 'content-security-policy') === "\(csp)"; });
              await check('hashed', '/index-Bx3kT9aQ.js', {}, async function (r) { return r.status === 200 && h(r, 'cache-control').indexOf('immutable') >= 0 && h(r, 'content-type').indexOf('javascript') >= 0; });
              await check('range', '/media.bin', { headers: { Range: 'bytes=2-5' } }, async function (r) { return r.status === 206 && (await r.text()) === '2345' && h(r, 'content-range') === 'bytes 2-5/10'; });
              var first = await fetch('/style.css', { cache: 'no-store' });
              await check('etag', '/style.css', { headers: { 'If-None-Match': h(first, 'etag') } }, async function (r) { return h(first, 'etag') !== '' && r.status === 304; });
              await check('missing', '/missing.js', {}, async function (r) { return r.status === 404; });
              await check('head', '/media.bin', { method: 'HEAD' }, async function (r) { return r.status === 200 && h(r, 'content-length') === '10'; });
              var colour = fails.length === 0 ? '\(Self.green)' : '\(Self.red)';
              document.documentElement.style.background = colour; document.body.style.background = colour;
              if (fails.length) window.webkit.messageHandlers.clientctl.postMessage({ action: 'failed:' + fails.join(',') }).catch(function () {});
              WebAppLocalServer.startupDidComplete();
            })();
            """
        try await rig.publish(
            "1.0.0", script: checks,
            extra: ["media.bin": Data("0123456789".utf8), "index-Bx3kT9aQ.js": Data("console.log('chunk');\n".utf8)])
        try await rig.run(["install", "--root", rig.root])
        let shot = rig.tmp("shot.png")
        let run = try await ShellHarness.run(root: rig.root, until: "the commit and a snapshot", arguments: ["--snapshot", shot, "--csp", csp]) {
            events in events.contains { $0.kind == "committed" } && events.contains { $0.event == "snapshot" }
        }
        let failed = run.events.first { $0.action?.hasPrefix("failed:") == true }
        #expect(failed == nil, "checks that failed through the app scheme: \(failed?.action ?? "")")
        #expect(run.watchdog("committed", "1.0.0") != nil, "\(run.summary)")
        try await Self.expectColour(shot, Self.green)
    }

    @Test func aVersionThatNeverAcknowledgesIsRolledBackWithinItsTimeout() async throws {
        let rig = try await ReleaseRig(startupTimeout: 2, label: "shell-rollback")
        try await rig.publish("1.0.0", script: ShellHarness.paint(Self.green, then: ReleaseRig.acknowledging))
        try await rig.run(["install", "--root", rig.root])
        let first = try await ShellHarness.run(root: rig.root, until: "1.0.0 committed") { $0.contains { $0.kind == "committed" } }
        #expect(first.watchdog("committed", "1.0.0") != nil, "\(first.summary)")

        try await rig.publish("1.1.0", script: ShellHarness.paint(Self.red))  // never acknowledges
        try await rig.run(["install", "--root", rig.root])
        let shot = rig.tmp("shot.png")
        let run = try await ShellHarness.run(root: rig.root, until: "1.1.0 failed and a snapshot after it", arguments: ["--snapshot", shot]) {
            events in
            guard let failed = events.firstIndex(where: { $0.event == "watchdog" && $0.kind == "failed" }) else { return false }
            return events[failed...].contains { $0.event == "snapshot" }
        }
        let trial = try #require(run.watchdog("trialStarted", "1.1.0"), "\(run.summary)")
        let failed = try #require(run.watchdog("failed", "1.1.0"), "\(run.summary)")
        #expect(failed.revertedTo == "1.0.0")
        #expect(failed.ms - trial.ms <= 2000 + 1000, "rolled back within the 2 s timeout plus 1 s: \(failed.ms - trial.ms) ms")
        #expect(run.lastSnapshot?.version == "1.0.0", "\(run.summary)")
        try await Self.expectColour(shot, Self.green)
        #expect(try await rig.status().current == .installed("1.0.0"))
    }

    @Test func checkForUpdatesThenSwitchShowsTheNewVersion() async throws {
        let rig = try await ReleaseRig(startupTimeout: 10, label: "shell-switch")
        let checking = """
            WebAppLocalServer.startupDidComplete();
            WebAppLocalServer.onNewVersionReady(function (v) { WebAppLocalServer.switchToPendingVersion(); });
            WebAppLocalServer.checkForUpdates();
            """
        try await rig.publish("1.0.0", script: ShellHarness.paint(Self.green, then: checking))
        try await rig.run(["install", "--root", rig.root])
        try await rig.publish("1.1.0", script: ShellHarness.paint(Self.blue, then: ReleaseRig.acknowledging))
        let shot = rig.tmp("shot.png")
        let run = try await ShellHarness.run(
            root: rig.root, until: "1.1.0 committed and its snapshot", arguments: ["--snapshot", shot, "--check-interval", "0"]
        ) { events in
            events.contains { $0.kind == "committed" && $0.version == "1.1.0" } && events.contains { $0.event == "snapshot" && $0.version == "1.1.0" }
        }
        #expect(run.events.contains { $0.event == "updateAvailable" && $0.version == "1.1.0" }, "\(run.summary)")
        #expect(run.watchdog("committed", "1.1.0") != nil, "the new page acknowledged: \(run.summary)")
        #expect(run.lastSnapshot?.version == "1.1.0", "\(run.summary)")
        try await Self.expectColour(shot, Self.blue)
    }

    @Test func anOldPageCannotAcknowledgeTheNewVersion() async throws {
        let rig = try await ReleaseRig(startupTimeout: 2, label: "shell-old-page")
        // 1.0.0 switches to 1.1.0 and, from the same (old) page, acknowledges at once.
        let oldPage = """
            WebAppLocalServer.startupDidComplete(function () { WebAppLocalServer.checkForUpdates(); });
            WebAppLocalServer.onNewVersionReady(function () {
              WebAppLocalServer.switchToPendingVersion();
              WebAppLocalServer.startupDidComplete();
            });
            """
        try await rig.publish("1.0.0", script: ShellHarness.paint(Self.green, then: oldPage))
        try await rig.run(["install", "--root", rig.root])
        try await rig.publish("1.1.0", script: ShellHarness.paint(Self.red))  // never acknowledges
        let run = try await ShellHarness.run(root: rig.root, until: "1.1.0's trial to end", arguments: ["--check-interval", "0"]) { events in
            events.contains { $0.event == "watchdog" && $0.version == "1.1.0" && ["committed", "failed"].contains($0.kind ?? "") }
        }
        #expect(run.watchdog("trialStarted", "1.1.0") != nil, "\(run.summary)")
        let refusal = run.events.first { $0.event == "error" && $0.action == "startup-complete" }
        #expect(refusal?.message?.contains("1.0.0") == true && refusal?.message?.contains("1.1.0") == true, "\(run.summary)")
        #expect(run.watchdog("committed", "1.1.0") == nil, "\(run.summary)")
        #expect(run.watchdog("failed", "1.1.0")?.revertedTo == "1.0.0", "\(run.summary)")
    }

    @Test func navigationToAnotherOriginIsRefused() async throws {
        let rig = try await ReleaseRig(startupTimeout: 10, label: "shell-navigation")
        // Not port 9: WebKit refuses its list of unsafe ports before any policy is asked.
        let leaving = """
            WebAppLocalServer.startupDidComplete(function () { window.location.href = 'http://127.0.0.1:65432/elsewhere'; });
            """
        try await rig.publish("1.0.0", script: ShellHarness.paint(Self.green, then: leaving))
        try await rig.run(["install", "--root", rig.root])
        let shot = rig.tmp("shot.png")
        let run = try await ShellHarness.run(
            root: rig.root, until: "a refused navigation and a snapshot", arguments: ["--snapshot", shot, "--kiosk"]
        ) {
            events in events.contains { $0.event == "navigationRefused" } && events.contains { $0.event == "snapshot" }
        }
        #expect(run.events.contains { $0.event == "navigationRefused" && $0.uri == "http://127.0.0.1:65432/elsewhere" }, "\(run.summary)")
        try await Self.expectColour(shot, Self.green)
    }

    @Test func aMeteorRootRunsInTheShell() async throws {
        let tmp = try TemporaryDirectory("shell-meteor")
        let fixtures = try MeteorScenarioFixtures.write(.current, to: tmp("fixtures"))
        let made = try await ClientctlBinary.run([
            "init", "--root", tmp("device"), "--meteor-url", "http://127.0.0.1:9/", "--embedded", fixtures.embedded,
        ])
        #expect(made.status == 0, "\(made.errorOutput)")
        let run = try await ShellHarness.run(
            root: tmp("device"), until: "the start and a snapshot", arguments: ["--snapshot", tmp("shot.png"), "--check-interval", "0"]
        ) { events in events.contains { $0.event == "started" } && events.contains { $0.event == "snapshot" } }
        #expect(run.status == 0, "\(run.summary)")
        #expect(run.events.contains { $0.event == "started" }, "\(run.summary)")
        #expect(run.lastSnapshot != nil, "the Meteor page's startupDidComplete reached the engine: \(run.summary)")
        #expect(!run.events.contains { $0.event == "error" }, "\(run.summary)")
    }

    @Test func theShellAndServeRefuseToShareARoot() async throws {
        let rig = try await ReleaseRig(startupTimeout: 10, label: "shell-lock")
        try await rig.publish("1.0.0", script: ShellHarness.paint(Self.green, then: ReleaseRig.acknowledging))
        try await rig.run(["install", "--root", rig.root])

        let serve = try await ServeProcess(root: rig.root, scratch: rig.tmp.path)
        // The shell waits up to 5 s for the agent lock (a one-shot command holds it
        // briefly), then refuses; --exit-after only bounds the test if it never does.
        let refused = try await ShellHarness.run(root: rig.root, exitAfter: 30)
        #expect(refused.status == 75, "\(refused.summary)")
        #expect(refused.stderr.contains("clientctl-shell:") && refused.stderr.contains(rig.root), "\(refused.summary)")
        #expect(serve.stop() == 0)
        #expect(!FileManager.default.fileExists(atPath: rig.root + "/agent.json"), "serve's shutdown cleared agent.json")

        // Running until serve has been refused, however long that takes (not a fixed window).
        let shell = try RunningShell(root: rig.root, exitAfter: 300, scratch: rig.tmp.path)
        // The shell holds the agent lock once agent.json names it.
        try await Poll.until("the shell to write agent.json", timeout: 60) { FileManager.default.fileExists(atPath: rig.root + "/agent.json") }
        let second = try await ClientctlBinary.run(["serve", "--root", rig.root, "--port", "0"])
        #expect(second.status == 75, "serve refuses while the shell runs: \(second.errorOutput)")
        let first = try await shell.terminate()
        #expect(first.status == 0, "\(first.summary)")
    }
}

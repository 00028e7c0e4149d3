import Foundation
import TestSupport
import Testing

/// `--origin loopback` (issue 28, docs/native-shell.md#origins-app-or-loopback-http): the
/// page lives at http://127.0.0.1:PORT/, where `ws:` URLs derive from its origin and a
/// service worker registers, while its bridge is still the shell's message handler; no
/// other process gets an answer from the port, and `serve` still cannot share the root.
/// Real windows under Xvfb, in `NativeShellTests` so that one window runs at a time.
extension NativeShellTests {
    /// Checks what an app needing an http origin needs, paints green when all held (red
    /// otherwise, naming the failures in a refused bridge message), then acknowledges.
    static let httpOriginChecks = """
        (async function () {
          var fails = [];
          if (location.protocol !== 'http:' || location.hostname !== '127.0.0.1') fails.push('origin:' + location.origin);
          if (location.search !== '') fails.push('search:' + location.search);
          if (!window.isSecureContext) fails.push('not-secure');
          if (document.cookie.indexOf('clientctl-launch') >= 0) fails.push('cookie-readable');
          try {
            var socket = new WebSocket(location.origin.replace('http', 'ws') + '/socket');
            socket.onerror = function () {};
            if (socket.url !== 'ws://' + location.host + '/socket') fails.push('ws-url:' + socket.url);
          } catch (e) { fails.push('ws:' + e.message); }
          try {
            await navigator.serviceWorker.register('/sw.js');
            await navigator.serviceWorker.ready;
            if (!navigator.serviceWorker.controller) {
              await Promise.race([
                new Promise(function (done) { navigator.serviceWorker.addEventListener('controllerchange', done); }),
                new Promise(function (done) { setTimeout(done, 3000); })]);
            }
            if (!navigator.serviceWorker.controller) fails.push('sw-no-controller');
            var answer = await (await fetch('/from-sw')).text();
            if (answer !== 'answered by the service worker') fails.push('sw-fetch:' + answer.slice(0, 40));
            var style = await fetch('/style.css');
            if (style.status !== 200) fails.push('sw-network:' + style.status);
          } catch (e) { fails.push('sw:' + e.message); }
          var colour = fails.length === 0 ? '\(green)' : '\(red)';
          document.documentElement.style.background = colour; document.body.style.background = colour;
          if (fails.length) window.webkit.messageHandlers.clientctl.postMessage({ action: 'failed:' + fails.join(',') }).catch(function () {});
          WebAppLocalServer.startupDidComplete();
        })();
        """

    /// Takes what it is asked for and answers `/from-sw` itself.
    static let serviceWorker = """
        self.addEventListener('install', function () { self.skipWaiting(); });
        self.addEventListener('activate', function (event) { event.waitUntil(self.clients.claim()); });
        self.addEventListener('fetch', function (event) {
          if (new URL(event.request.url).pathname === '/from-sw') event.respondWith(new Response('answered by the service worker'));
        });
        """

    @Test func aLoopbackPageHasAnHTTPOriginAndTheBridge() async throws {
        let rig = try await ReleaseRig(startupTimeout: 10, label: "shell-loopback")
        try await rig.publish("1.0.0", script: Self.httpOriginChecks, extra: ["sw.js": Data(Self.serviceWorker.utf8)])
        try await rig.run(["install", "--root", rig.root])
        let shot = rig.tmp("shot.png")
        let shell = try RunningShell(
            root: rig.root, exitAfter: 180, arguments: ["--origin", "loopback", "--port", "0", "--snapshot", shot], scratch: rig.tmp.path)
        let listening = try await shell.waitFor("the loopback origin") { $0.contains { $0.event == "listening" } }
        let uri = try #require(listening.first { $0.event == "listening" }?.uri)
        #expect(uri.hasPrefix("http://127.0.0.1:") && uri.hasSuffix("/"), "\(uri)")
        let port = String(uri.dropFirst("http://127.0.0.1:".count).dropLast())

        // Another process (curl) without the run's secret: refused; with another Host: 421.
        let refused = try await Curl.request(uri)
        #expect(refused.status == 403, "\(refused.status) \(refused.body)")
        let guessed = try await Curl.request(uri + "?clientctl-launch=" + String(repeating: "0", count: 64))
        #expect(guessed.status == 403, "\(guessed.status)")
        let control = try await Curl.request(uri + "__clientctl/status")
        #expect(control.status == 403, "\(control.status)")
        let forged = try await Curl.request(uri, headers: ["Cookie: clientctl-launch=" + String(repeating: "a", count: 64)])
        #expect(forged.status == 403, "\(forged.status)")
        let rebound = try await Curl.request(uri, headers: ["Host: evil.example:\(port)"])
        #expect(rebound.status == 421, "\(rebound.status) \(rebound.body)")

        // The one-writer rule: serve refuses the root the shell holds.
        try await Poll.until("the shell to write agent.json") { FileManager.default.fileExists(atPath: rig.root + "/agent.json") }
        let serve = try await ClientctlBinary.run(["serve", "--root", rig.root, "--port", "0"])
        #expect(serve.status == 75, "serve refuses while the shell runs: \(serve.errorOutput)")

        let run = try await shell.stop(when: "the page's acknowledgement and its snapshot") { events in
            events.contains { $0.kind == "committed" && $0.version == "1.0.0" } && events.contains { $0.event == "snapshot" }
        }
        #expect(run.status == 0, "\(run.summary)")
        let failed = run.events.first { $0.action?.hasPrefix("failed:") == true }
        #expect(failed == nil, "checks that failed on the loopback origin: \(failed?.action ?? "")")
        #expect(run.watchdog("committed", "1.0.0") != nil, "the bridge reached the engine: \(run.summary)")
        #expect(!run.events.contains { $0.event == "navigationRefused" }, "\(run.summary)")
        try await Self.expectColour(shot, Self.green)
        #expect(try await rig.status().lastKnownGood == "1.0.0")
    }

    /// Without `--port`, the port is serve's for the app id: the origin, and so the page's
    /// storage, is the same at the next start. The page paints green at its first start
    /// and blue when it finds what it stored.
    @Test func aLoopbackPagesStorageOutlivesARestart() async throws {
        let rig = try await ReleaseRig(startupTimeout: 10, label: "shell-loopback-storage")
        let remembering = """
            var seen = localStorage.getItem('seen') === 'yes';
            localStorage.setItem('seen', 'yes');
            var colour = seen ? '\(Self.blue)' : '\(Self.green)';
            document.documentElement.style.background = colour; document.body.style.background = colour;
            WebAppLocalServer.startupDidComplete();
            """
        try await rig.publish("1.0.0", script: remembering)
        try await rig.run(["install", "--root", rig.root])
        var origins: [String?] = []
        for colour in [Self.green, Self.blue] {
            let shot = rig.tmp("shot.png")
            let run = try await ShellHarness.run(root: rig.root, until: "a snapshot", arguments: ["--origin", "loopback", "--snapshot", shot]) {
                $0.contains { $0.event == "snapshot" }
            }
            #expect(run.status == 0 && run.lastSnapshot != nil, "\(run.summary)")
            origins.append(run.events.first { $0.event == "listening" }?.uri)
            try await Self.expectColour(shot, colour)
        }
        #expect(origins[0] != nil && origins[0] == origins[1], "\(origins)")
        #expect(FileManager.default.fileExists(atPath: rig.root + "/shell/data"), "the storage lives in the root")

        let mixed = try await ShellHarness.run(root: rig.root, exitAfter: 5, arguments: ["--port", "12345"])
        #expect(mixed.status == 64 && mixed.stderr.contains("--port needs --origin loopback"), "\(mixed.summary)")
    }

    /// A packaged app chooses its origin once, in its template (`clientctl package --origin
    /// loopback`): the shell serves the page over http without the flag, `--origin app`
    /// still wins, and `--port` with a template whose origin is app is refused (64).
    @Test func aPackagedAppsTemplateChoosesItsOrigin() async throws {
        let tmp = try TemporaryDirectory("shell-template-origin")
        try TemplateFolder.make(at: tmp("loopback")) { $0["origin"] = "loopback" }
        let fromTemplate = try await ShellHarness.run(
            root: tmp("root-1"), until: "the first paint", arguments: ["--template", tmp("loopback"), "--port", "0"]
        ) { $0.contains { $0.event == "firstPaint" } }
        #expect(fromTemplate.status == 0, "\(fromTemplate.summary)")
        let uri = fromTemplate.events.first { $0.event == "listening" }?.uri ?? ""
        #expect(uri.hasPrefix("http://127.0.0.1:"), "the template's origin: \(fromTemplate.summary)")
        #expect(fromTemplate.events.contains { $0.event == "firstPaint" }, "\(fromTemplate.summary)")

        let flagWins = try await ShellHarness.run(
            root: tmp("root-2"), until: "the first paint", arguments: ["--template", tmp("loopback"), "--origin", "app"]
        ) { $0.contains { $0.event == "firstPaint" } }
        #expect(flagWins.status == 0 && flagWins.events.contains { $0.event == "firstPaint" }, "\(flagWins.summary)")
        #expect(!flagWins.events.contains { $0.event == "listening" }, "--origin app wins: \(flagWins.summary)")

        try TemplateFolder.make(at: tmp("app"))
        let portWithoutLoopback = try await ShellHarness.run(root: tmp("root-3"), exitAfter: 4, arguments: ["--template", tmp("app"), "--port", "0"])
        #expect(portWithoutLoopback.status == 64, "\(portWithoutLoopback.summary)")
        #expect(portWithoutLoopback.stderr.contains("--port needs --origin loopback"), "\(portWithoutLoopback.summary)")
    }
}

import ClientServer
import ClientShim
import ClientUpdater
import Foundation
import TestSupport
import Testing

/// Node.js, which runs the shim script in these tests (`Scripts/test` installs `nodejs`).
/// - Throws: ``HarnessError`` saying so when it is missing: the tests fail, never skip.
func nodePath() throws -> String {
    guard let path = ["/usr/bin/node", "/usr/local/bin/node"].first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
        throw HarnessError("node is not installed: Scripts/test installs it (apt-get install nodejs)")
    }
    return path
}

/// Runs the injected shim in Node.js (when installed) against the live server (serve
/// backend) and a fake Capacitor plugin, and checks what the page's callbacks see.
/// The real-browser test of the whole pipeline lives with the updater's tests.
@Suite struct ShimScriptTests {
    static var node: String { get throws { try nodePath() } }

    /// The shim's JS taken out of its `<script>` element.
    static func shimJS(_ shim: Shim) -> String {
        let element = shim.scriptElement
        let start = element.firstIndex(of: ">").map { element.index(after: $0) } ?? element.startIndex
        return String(element[start...].dropLast("</script>".count))
    }

    static func runNode(_ script: String) async throws -> [String: String] {
        let dir = try TemporaryDirectory("shim-node")
        let file = dir("test.js")
        try Data(script.utf8).write(to: URL(fileURLWithPath: file))
        let node = try Self.node
        let output = try await LoopbackHTTP.offload {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: node)
            process.arguments = [file]
            let pipe = Pipe()
            let errors = Pipe()
            process.standardOutput = pipe
            process.standardError = errors
            try process.runUnmasked()
            let data = try pipe.fileHandleForReading.readAllRetryingInterrupts()
            let stderr = try errors.fileHandleForReading.readAllRetryingInterrupts()
            process.waitUntilExit()
            return (data, String(decoding: stderr, as: UTF8.self))
        }
        withExtendedLifetime(dir) {}
        guard let results = (try? JSONSerialization.jsonObject(with: output.0)) as? [String: String] else {
            throw LoopbackHTTP.Failure(description: "node printed \(String(decoding: output.0, as: UTF8.self)) \(output.1)")
        }
        return results
    }

    @Test func serveBackend() async throws {
        let handler = FakeControlHandler(status: ControlStatus(current: "1.0.0", pending: "1.1.0"))
        handler.switchError = UpdaterError(.notFound, "no pending version")
        let server = try ClientServer(configuration: ServerHarness.configuration(), control: handler, logger: ServerHarness.quietLogger)
        let results = try await ServerHarness.withServer(server) { port in
            try await Self.runNode(
                """
                const origin = "http://127.0.0.1:\(port)";
                const realFetch = fetch;
                globalThis.fetch = (url, opts) => realFetch(origin + url, opts);
                // A tiny EventSource over fetch streaming (Node 20 has none).
                globalThis.EventSource = class {
                  constructor(url) {
                    this.handlers = {};
                    realFetch(origin + url).then(async (r) => {
                      const reader = r.body.getReader(); let text = "";
                      for (;;) {
                        const { value, done } = await reader.read(); if (done) return;
                        text += new TextDecoder().decode(value);
                        let i;
                        while ((i = text.indexOf("\\n\\n")) >= 0) {
                          const frame = text.slice(0, i); text = text.slice(i + 2);
                          const ev = /^event: (.*)$/m.exec(frame), data = /^data: (.*)$/m.exec(frame);
                          if (ev && this.handlers[ev[1]]) this.handlers[ev[1]]({ data: data && data[1] });
                        }
                      }
                    });
                  }
                  addEventListener(name, fn) { this.handlers[name] = fn; }
                };
                globalThis.window = globalThis;
                \(Self.shimJS(Shim()))
                const out = {};
                const done = () => { console.log(JSON.stringify(out)); process.exit(0); };
                try { WebAppLocalServer.localFileSystemUrl(); } catch (e) { out.localFileSystemUrl = e.message; }
                WebAppLocalServer.onNewVersionReady((v) => { out.ready = v; if (out.switchError) done(); });
                WebAppLocalServer.startupDidComplete(() => {
                  out.startup = "called";
                  WebAppLocalServer.switchToPendingVersion(() => { out.switched = "unexpected"; },
                    (e) => { out.switchError = e.message; if (out.ready) done(); });
                });
                setTimeout(() => { out.timeout = "yes"; done(); }, 30000);
                """)
        }
        #expect(results["localFileSystemUrl"] == "WebAppLocalServer.localFileSystemUrl is not supported")
        #expect(results["startup"] == "called")
        #expect(results["switchError"] == "no pending version")
        #expect(results["ready"] == "1.1.0", "the pending version is announced over the event stream")
        #expect(results["timeout"] == nil)
        #expect(handler.calls.contains("startupDidComplete") && handler.calls.contains("switchToPendingVersion"))
    }

    /// `getChannel()` and `setChannel(name, cb, errCb)` of the serve backend, through the
    /// control routes: a promise of the choice, the callbacks, and a refusal's reason.
    @Test func aPageReadsAndChoosesTheChannelThroughTheControlRoutes() async throws {
        let handler = FakeControlHandler(status: ControlStatus(current: "1.0.0", lastKnownGood: "1.0.0"))
        let server = try ClientServer(configuration: ServerHarness.configuration(), control: handler, logger: ServerHarness.quietLogger)
        let results = try await ServerHarness.withServer(server) { port in
            try await Self.runNode(
                """
                const origin = "http://127.0.0.1:\(port)";
                const realFetch = fetch;
                globalThis.fetch = (url, opts) => realFetch(origin + url, opts);
                globalThis.window = globalThis;
                \(Self.shimJS(Shim()))
                const out = {};
                const done = () => { console.log(JSON.stringify(out)); process.exit(0); };
                WebAppLocalServer.onError((e) => { out.onError = e.message; });
                WebAppLocalServer.getChannel().then((c) => {
                  out.read = c.channel + " of " + c.choosable.join(",");
                  WebAppLocalServer.setChannel("nightly", () => { out.nightly = "unexpected"; }, (e) => {
                    out.nightly = e.message;
                    WebAppLocalServer.setChannel("beta", (chosen) => { out.beta = chosen.channel; done(); });
                  });
                });
                WebAppLocalServer.setChannel("").catch((e) => { out.empty = e.message; });
                setTimeout(() => { out.timeout = "yes"; done(); }, 30000);
                """)
        }
        #expect(results["read"] == "stable of beta,stable")
        #expect(results["nightly"] == "channel 'nightly' is not allowed by trust root 1")
        #expect(results["beta"] == "beta")
        #expect(results["empty"] == "setChannel takes a channel name")
        #expect(results["onError"] == nil && results["timeout"] == nil)
        #expect(handler.calls.contains("setChannel beta") && handler.calls.contains("channels"))
    }

    @Test func aPageOnTrialThatNeverRegisteredReloadsAfterARollback() async throws {
        let handler = FakeControlHandler(status: ControlStatus(current: "1.2.0", lastKnownGood: "1.1.0", inTrial: true))
        let server = try ClientServer(configuration: ServerHarness.configuration(), control: handler, logger: ServerHarness.quietLogger)
        let results = try await ServerHarness.withServer(server) { port in
            async let rolledBack: Void = {
                // Once the page has polled twice, the watchdog rolls back to 1.1.0.
                try await handler.wait(for: "the page to poll the status twice") { calls, _ in calls.filter { $0 == "status" }.count >= 2 }
                handler.setStatus(ControlStatus(current: "1.1.0", lastKnownGood: "1.1.0", inTrial: false))
            }()
            let output = try await Self.runNode(
                """
                const origin = "http://127.0.0.1:\(port)";
                const realFetch = fetch;
                globalThis.fetch = (url, opts) => realFetch(origin + url, opts);
                globalThis.window = globalThis;
                const out = {};
                window.location = { reload: () => { out.reloaded = "yes"; console.log(JSON.stringify(out)); process.exit(0); } };
                \(Self.shimJS(Shim()))
                // The page throws before touching WebAppLocalServer: it registers nothing.
                setTimeout(() => { out.timeout = "yes"; console.log(JSON.stringify(out)); process.exit(0); }, 30000);
                """)
            try await rolledBack
            return output
        }
        #expect(results["reloaded"] == "yes", "a page on trial notices the rollback without registering anything")
        #expect(results["timeout"] == nil)
    }

    @Test func aPageNotOnTrialPollsOnlyEveryTenSeconds() async throws {
        let handler = FakeControlHandler(status: ControlStatus(current: "1.1.0", lastKnownGood: "1.1.0", inTrial: false))
        let server = try ClientServer(configuration: ServerHarness.configuration(), control: handler, logger: ServerHarness.quietLogger)
        let results = try await ServerHarness.withServer(server) { port in
            try await Self.runNode(
                """
                const origin = "http://127.0.0.1:\(port)";
                const realFetch = fetch;
                // The observation window starts when the first status answer arrives (not at
                // start-up, which a loaded machine can make take seconds).
                let watching = false;
                const finish = () => { console.log(JSON.stringify({ done: "yes" })); process.exit(0); };
                globalThis.fetch = (url, opts) => realFetch(origin + url, opts).then((r) => {
                  if (!watching && String(url).includes("status")) { watching = true; setTimeout(finish, 2500); }
                  return r;
                });
                globalThis.window = globalThis;
                window.location = { reload: () => { console.log(JSON.stringify({ reloaded: "unexpected" })); process.exit(0); } };
                \(Self.shimJS(Shim()))
                setTimeout(finish, 30000);
                """)
        }
        #expect(results["done"] == "yes")
        #expect(handler.calls.filter { $0 == "status" }.count == 1, "one status request, the next 10 s later: \(handler.calls)")
    }

    /// When the staged version's apply policy lets the page switch (`switchNow` in the
    /// status, docs/apply-policies.md#serve), the shim asks for the switch and reloads: a
    /// page that never calls anything still moves onto the new version.
    @Test func aPageSwitchesAndReloadsWhenThePolicyAllowsIt() async throws {
        var allowed = ControlStatus(current: "1.1.0", pending: "1.2.0", lastKnownGood: "1.1.0", inTrial: false)
        allowed.switchNow = true
        let handler = FakeControlHandler(status: allowed)
        let server = try ClientServer(configuration: ServerHarness.configuration(), control: handler, logger: ServerHarness.quietLogger)
        let results = try await ServerHarness.withServer(server) { port in
            try await Self.runNode(
                """
                const origin = "http://127.0.0.1:\(port)";
                const realFetch = fetch;
                globalThis.fetch = (url, opts) => realFetch(origin + url, opts);
                globalThis.window = globalThis;
                window.location = { reload: () => { console.log(JSON.stringify({ reloaded: "yes" })); process.exit(0); } };
                \(Self.shimJS(Shim()))
                setTimeout(() => { console.log(JSON.stringify({ timeout: "yes" })); process.exit(0); }, 30000);
                """)
        }
        #expect(results["reloaded"] == "yes" && results["timeout"] == nil)
        #expect(handler.calls.contains("switchToPendingVersion"), "\(handler.calls)")
    }

    @Test func capacitorBackend() async throws {
        let results = try await Self.runNode(
            """
            const calls = [], listeners = {};
            globalThis.window = globalThis;
            window.Capacitor = { Plugins: { Updater: {
              startupDidComplete: async () => { calls.push("startupDidComplete"); },
              checkForUpdates: async () => { calls.push("checkForUpdates"); },
              switchToPendingVersion: async () => { calls.push("switchToPendingVersion"); throw new Error("nothing pending"); },
              addListener: (name, fn) => { listeners[name] = fn; },
            } } };
            \(Self.shimJS(Shim(backend: .capacitor, pluginName: "Updater")))
            const out = {};
            WebAppLocalServer.onNewVersionReady((v) => { out.ready = v; });
            WebAppLocalServer.onError((e) => { out.error = e.message; });
            WebAppLocalServer.startupDidComplete(() => {
              WebAppLocalServer.checkForUpdates(() => {
                WebAppLocalServer.switchToPendingVersion(() => {}, (e) => {
                  out.switchError = e.message;
                  listeners.updateAvailable({ version: "2.0.0" });
                  listeners.error({ message: "download failed" });
                  out.calls = calls.join(",");
                  console.log(JSON.stringify(out));
                });
              });
            });
            """)
        #expect(results["calls"] == "startupDidComplete,checkForUpdates,switchToPendingVersion")
        #expect(results["switchError"] == "nothing pending")
        #expect(results["ready"] == "2.0.0")
        #expect(results["error"] == "download failed")
    }

    /// The serve backend's input reports and leases (docs/apply-policies.md#serve): input
    /// events reach `activity` at most once every 5 s; `holdUpdate(seconds)` posts the page's
    /// lease and resolves to its end; `releaseUpdate()` and the page's `pagehide` let go;
    /// a negative hold is refused in the page.
    @Test func inputIsReportedAtMostEveryFiveSecondsAndLeasesArePosted() async throws {
        let handler = FakeControlHandler(status: ControlStatus(current: "1.0.0"))
        let server = try ClientServer(configuration: ServerHarness.configuration(), control: handler, logger: ServerHarness.quietLogger)
        let results = try await ServerHarness.withServer(server) { port in
            try await Self.runNode(
                """
                const origin = "http://127.0.0.1:\(port)";
                const realFetch = fetch;
                globalThis.fetch = (url, opts) => realFetch(origin + url, opts);
                globalThis.window = globalThis;
                const listeners = {};
                window.addEventListener = (name, fn) => { (listeners[name] = listeners[name] || []).push(fn); };
                const fire = (name) => (listeners[name] || []).forEach((fn) => fn({ type: name }));
                \(Self.shimJS(Shim()))
                const out = {};
                ["keydown", "pointerdown", "pointermove", "wheel", "touchstart"].forEach(fire);
                WebAppLocalServer.holdUpdate(120).then((r) => {
                  out.until = r.until;
                  return WebAppLocalServer.holdUpdate(-1).catch((e) => { out.negative = e.message; });
                }).then(() => WebAppLocalServer.releaseUpdate()).then(() => {
                  fire("pagehide");
                  setTimeout(() => { console.log(JSON.stringify(out)); process.exit(0); }, 1000);
                }).catch((e) => { out.error = String(e && e.message); console.log(JSON.stringify(out)); process.exit(0); });
                setTimeout(() => { out.timeout = "yes"; console.log(JSON.stringify(out)); process.exit(0); }, 30000);
                """)
        }
        #expect(results["timeout"] == nil && results["error"] == nil, "\(results)")
        #expect(results["until"] == "2027-01-15T08:02:00Z")
        #expect(results["negative"] == "holdUpdate takes a number of seconds, 0 or more")
        let calls = handler.calls
        #expect(calls.filter { $0 == "activity" }.count == 1, "five input events in a moment: one report: \(calls)")
        #expect(calls.filter { $0 == "hold lease 120" }.count == 1, "\(calls)")
        #expect(calls.filter { $0 == "hold lease 0" }.count == 2, "releaseUpdate and pagehide: \(calls)")
    }
}

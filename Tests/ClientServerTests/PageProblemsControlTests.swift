import ClientFoundation
import ClientServer
import ClientShim
import ClientUpdater
import Foundation
import Synchronization
import TestSupport
import Testing

/// `POST /__clientctl/problems` and the shim that feeds it (docs/page-errors.md): the page's
/// errors after its acknowledgement reach the handler coalesced, at most one post every 2 s
/// whatever the page throws; another origin's script and a frame are not counted; a bad
/// body is refused naming why and never reaches the handler.
@Suite struct PageProblemsControlTests {
    /// Records each `pageProblems` call; a kind that is not a word is refused as the agent
    /// refuses it (an error of kind `usage`).
    final class ProblemRecorder: ControlHandler {
        struct Call: Sendable {
            var at: ContinuousClock.Instant
            var errors: Int64
            var messages: [String]
            var kinds: [String]
            var version: String?
        }
        private let log = Mutex<[Call]>([])
        var calls: [Call] { log.withLock { $0 } }

        func pageProblems(errors: Int64, messages: [String], appKinds: [String], version: String?) async throws {
            for kind in appKinds where kind.isEmpty || !kind.allSatisfy({ $0.isLetter || $0.isNumber || "-_.".contains($0) }) {
                throw ChannelRefusal(message: "reportProblem: the kind '\(kind)' may hold only letters, digits, '-', '_' and '.'", kind: .usage)
            }
            let call = Call(at: .now, errors: errors, messages: messages, kinds: appKinds, version: version)
            log.withLock { $0.append(call) }
        }
        func startupDidComplete() async throws -> ControlStatus { ControlStatus(current: "1.0.0", lastKnownGood: "1.0.0") }
        func checkForUpdates() async throws -> ControlStatus { ControlStatus(current: "1.0.0") }
        func switchToPendingVersion() async throws -> ControlStatus { ControlStatus(current: "1.0.0") }
        func status() async throws -> ControlStatus { ControlStatus(current: "1.0.0", lastKnownGood: "1.0.0") }
        func events() async -> AsyncStream<ControlEvent> { AsyncStream { $0.finish() } }
    }

    /// The shim's body counts the errors, then each kind: a refused kind is named in
    /// `refused` (400) and costs the others nothing; a malformed body, a missing header or
    /// another origin never reaches the handler.
    @Test func theEndpointCountsAndRefusesNamingWhy() async throws {
        let handler = ProblemRecorder()
        let server = try ClientServer(configuration: ServerHarness.configuration(), control: handler, logger: ServerHarness.quietLogger)
        try await ServerHarness.withServer(server) { port in
            let shim = ["X-Clientctl-Shim": "1", "Content-Type": "application/json"]
            let path = "/__clientctl/problems"
            let counted = try await LoopbackHTTP.request(
                port: port, path, method: "POST", headers: shim,
                body: #"{"errors":12,"messages":["Uncaught Error: x @ /app.js:3"],"version":"1.0.0"}"#)
            #expect(counted.status == 200 && counted.text == "{}", "\(counted.text)")

            let refusedKind = try await LoopbackHTTP.request(
                port: port, path, method: "POST", headers: shim, body: #"{"app":["sync-failed","bad kind!","render"],"version":"1.0.0"}"#)
            #expect(refusedKind.status == 400, "\(refusedKind.text)")
            let answer = try JSONSerialization.jsonObject(with: refusedKind.body) as? [String: Any]
            #expect(answer?["error"] as? String == "reportProblem: the kind 'bad kind!' may hold only letters, digits, '-', '_' and '.'")
            #expect((answer?["refused"] as? [String: String])?.keys.sorted() == ["bad kind!"], "\(refusedKind.text)")

            let bad: [(String, String)] = [
                (#"{"errors":-1}"#, #"\"errors\" must be a whole number, 0 or more"#),
                (#"{"errors":"3"}"#, #"\"errors\" must be a whole number, 0 or more"#),
                (#"{"errors":1.5}"#, #"\"errors\" must be a whole number, 0 or more"#),
                (#"{"messages":["a","b","c","d"]}"#, #"\"messages\" must be a list of at most 3 strings"#),
                (#"{"messages":"a"}"#, #"\"messages\" must be a list"#),
                (#"{"app":[1]}"#, #"\"app\" must be a list of at most 20 problem kinds"#),
                (#"{"version":""}"#, #"\"version\" must be a version string"#),
                (#"{"count":1}"#, #"unknown member \"count\""#),
                ("[1]", "the body is not a JSON object"),
                ("", "the body is not a JSON object"),
                (#"{"messages":[""# + String(repeating: "x", count: 9000) + #""]}"#, "the body is longer than 8192 bytes"),
            ]
            for (body, why) in bad {
                let refused = try await LoopbackHTTP.request(port: port, path, method: "POST", headers: shim, body: body)
                #expect(
                    refused.status == 400 && refused.text.contains("problems: ") && refused.text.contains(why), "\(body.prefix(40)): \(refused.text)")
            }

            let head = "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: application/json\r\n"
            let body = #"{"errors":5}"#
            for origin in ["http://evil.example.com", "http://127.0.0.1:\(port + 1)", "null"] {
                let foreign = try await LoopbackHTTP.raw(port: port, head + "X-Clientctl-Shim: 1\r\nOrigin: \(origin)\r\n", body: body)
                #expect(foreign.status == 403, "Origin \(origin): \(foreign.text)")
            }
            let bare = try await LoopbackHTTP.raw(port: port, head, body: body)
            #expect(bare.status == 403 && bare.text.contains("needs the X-Clientctl-Shim: 1 header"), "\(bare.text)")
            let get = try await LoopbackHTTP.raw(port: port, "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n")
            #expect(get.status == 405 && get["allow"] == "POST")
        }
        let calls = handler.calls
        #expect(calls.map(\.errors) == [12, 0, 0], "only the accepted bodies reached the handler: \(calls.map(\.errors))")
        #expect(calls.first?.messages == ["Uncaught Error: x @ /app.js:3"] && calls.first?.version == "1.0.0")
        #expect(calls.flatMap(\.kinds) == ["sync-failed", "render"], "the other kinds are counted: \(calls.map(\.kinds))")
    }

    /// The shim in Node.js: nothing counts before the acknowledgement; another origin's
    /// script and a muted "Script error." are not counted; a path:line names no query; 20
    /// kinds wait at most (the 21st is refused in the page); `pagehide` posts what waits at
    /// once with `keepalive`.
    @Test func theShimCountsOwnErrorsBoundedAndPostsOnPagehide() async throws {
        let handler = ProblemRecorder()
        let server = try ClientServer(configuration: ServerHarness.configuration(), control: handler, logger: ServerHarness.quietLogger)
        let results = try await ServerHarness.withServer(server) { port in
            try await ShimScriptTests.runNode(
                """
                const origin = "http://127.0.0.1:\(port)";
                const realFetch = fetch;
                const out = { keepalive: [] };
                globalThis.fetch = (url, opts) => {
                  if (url.endsWith("/problems")) out.keepalive.push(String(!!opts.keepalive));
                  return realFetch(origin + url, opts);
                };
                globalThis.window = globalThis;
                window.top = window;
                window.location = { origin: origin, href: origin + "/" };
                const listeners = {};
                window.addEventListener = (name, fn) => { (listeners[name] = listeners[name] || []).push(fn); };
                const fire = (name, e) => (listeners[name] || []).forEach((fn) => fn(e || { type: name }));
                \(ShimScriptTests.shimJS(Shim(backend: .serve)))
                fire("error", { filename: origin + "/app.js", message: "Uncaught Error: before", lineno: 1 });
                WebAppLocalServer.startupDidComplete(() => {
                  fire("error", { filename: origin + "/app.js?token=secret#x", message: "Uncaught Error: own", lineno: 7 });
                  fire("error", { filename: "", message: "Script error.", lineno: 0 });
                  fire("error", { filename: "http://cdn.example.com/lib.js", message: "Uncaught Error: cdn", lineno: 3 });
                  fire("unhandledrejection", { reason: new Error("refused") });
                  const kinds = [];
                  for (let i = 0; i < 22; i++) kinds.push(WebAppLocalServer.reportProblem("kind-" + i).then(() => "ok", (e) => e.message));
                  fire("pagehide");
                  Promise.all(kinds).then((r) => {
                    out.first = r[0]; out.last = r[21]; out.ok = String(r.filter((x) => x === "ok").length);
                    out.keepalive = out.keepalive.join(",");
                    console.log(JSON.stringify(out)); process.exit(0);
                  });
                });
                setTimeout(() => { out.timeout = "yes"; console.log(JSON.stringify(out)); process.exit(0); }, 30000);
                """)
        }
        #expect(results["timeout"] == nil, "\(results)")
        #expect(results["first"] == "ok" && results["ok"] == "20", "\(results)")
        #expect(results["last"] == "reportProblem: more than 20 kinds within 2 seconds; kind-21 was not counted", "\(results)")
        #expect(results["keepalive"] == "true", "one post, on pagehide, with keepalive: \(results)")
        let calls = handler.calls
        #expect(calls.first?.errors == 2, "the own error and the rejection: \(calls.map(\.errors))")
        #expect(calls.first?.messages == ["Uncaught Error: own @ /app.js:7", "Unhandled rejection: refused"], "\(calls.map(\.messages))")
        #expect(calls.flatMap(\.kinds) == (0..<20).map { "kind-\($0)" })
    }

    /// A page in headless Chromium that acknowledges, then throws: once an error and a
    /// rejection, then 10,000 errors a second for 5 s. Another origin's script and a frame of
    /// the app throw all along and are not counted; posts come at most one every ~2 s, each
    /// with at most 3 messages; `reportProblem` resolves for a word and rejects naming why.
    @Test func aThrowingPageInChromiumPostsCoalescedProblems() async throws {
        let handler = ProblemRecorder()
        let stub = try LoopbackHTTPServer { request in
            request.path == "/other.js"
                ? .text("setInterval(function () { throw new Error('foreign secret'); }, 200);", contentType: "text/javascript")
                : .text("ok")
        }
        defer { stub.stop() }
        let other = "http://127.0.0.1:\(stub.port)"
        let www = try TemporaryDirectory("problems-www")
        let shim = Shim().scriptElement(version: "1.0.0")
        let page = """
            <!doctype html><html><head>\(shim)<meta charset="utf-8"></head><body>
            <iframe src="/frame.html"></iframe>
            <script src="\(other)/other.js"></script>
            <script>
            function out(k, v) { fetch("\(other)/result?" + k + "=" + encodeURIComponent(v), { mode: "no-cors" }); }
            WebAppLocalServer.startupDidComplete(function () {
              setTimeout(function () { throw new Error("first boom"); }, 0);
              Promise.reject(new Error("nope"));
              WebAppLocalServer.reportProblem("bad kind!").then(function () { out("bad", "resolved"); }, function (e) { out("bad", e.message); });
              WebAppLocalServer.reportProblem(42).catch(function (e) { out("number", e.message); });
              // After 3 s of only the other origin's and the frame's errors, the flood starts
              // once the post that says so was answered.
              setTimeout(function () {
                WebAppLocalServer.reportProblem("flood-starts").then(function () {
                  out("good", "resolved");
                  var start = Date.now();
                  var flood = setInterval(function () {
                    for (var i = 0; i < 100; i++) setTimeout(function () { throw new Error("flood"); }, 0);
                    if (Date.now() - start > 5000) { clearInterval(flood); out("flood", "done"); }
                  }, 10);
                }, function (e) { out("good", e.message); out("flood", "done"); });
              }, 3000);
            });
            </script></body></html>
            """
        let frame = """
            <!doctype html><html><head>\(shim)</head><body><script>
            WebAppLocalServer.startupDidComplete(function () { setInterval(function () { throw new Error("in frame"); }, 200); });
            </script></body></html>
            """
        try Data(page.utf8).write(to: URL(fileURLWithPath: www("index.html")))
        try Data(frame.utf8).write(to: URL(fileURLWithPath: www("frame.html")))
        let server = try ClientServer(configuration: ServerHarness.configuration(), control: handler, logger: ServerHarness.quietLogger)
        try server.activate(servingDirectory: www.path)
        let results = try await ServerHarness.withServer(server) { port in
            let browser = try OpenChromiumPage("http://127.0.0.1:\(port)/")
            defer { browser.close() }
            func results() -> [String: String] {
                stub.requests.filter { $0.path == "/result" }.reduce(into: [:]) { $0.merge($1.queryItems) { a, _ in a } }
            }
            try await Poll.until("the page's flood ended", timeout: 120, every: .milliseconds(200)) { results()["flood"] == "done" }
            let ended = ContinuousClock.now
            try await Poll.until("a post after the flood", timeout: 30, every: .milliseconds(200)) {
                handler.calls.contains { $0.at > ended && $0.errors > 0 }
            }
            return results()
        }
        #expect(results["bad"] == "reportProblem: the kind 'bad kind!' may hold only letters, digits, '-', '_' and '.'", "\(results)")
        #expect(results["number"]?.hasPrefix("reportProblem takes a kind") == true, "\(results)")
        #expect(results["good"] == "resolved", "\(results)")

        let calls = handler.calls
        let posts = calls.filter { $0.errors > 0 }
        #expect(calls.allSatisfy { $0.version == "1.0.0" })
        #expect(posts.allSatisfy { $0.messages.count <= 3 }, "\(posts.map(\.messages))")
        let messages = Set(posts.flatMap(\.messages))
        #expect(messages.contains { $0.hasPrefix("Uncaught Error: first boom @ /:") }, "own script's path:line: \(messages)")
        #expect(messages.contains("Unhandled rejection: nope"), "\(messages)")
        #expect(!messages.contains { $0.contains("Script error") || $0.contains("foreign") || $0.contains("in frame") }, "\(messages)")
        // Before the flood only the page's own error and rejection count, however often the
        // other origin's script and the frame threw.
        let floodPost = calls.firstIndex { $0.kinds.contains("flood-starts") } ?? calls.endIndex - 1
        let quiet = calls[...floodPost].reduce(Int64(0)) { $0 + $1.errors }
        #expect(quiet == 2, "the first boom and the rejection only: \(calls[...floodPost].map { ($0.errors, $0.messages) })")
        let total = posts.reduce(Int64(0)) { $0 + $1.errors }
        #expect(total > 1000, "the flood is counted: \(total)")
        // One post every 2 s at most, however many errors: counted as they arrive.
        let span = (posts.last?.at ?? .now) - (posts.first?.at ?? .now)
        #expect(Double(posts.count) <= 2 + span / .seconds(2), "\(posts.count) posts in \(span)")
    }
}

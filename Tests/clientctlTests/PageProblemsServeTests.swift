import Foundation
import TestSupport
import Testing

/// A page's errors after its acknowledgement under `clientctl serve` with a real browser
/// (docs/page-errors.md): a page open in headless Chromium acknowledges, then throws an
/// uncaught error, leaves a rejection unhandled and reports a problem of its own; the shim
/// posts them to `problems`, the agent counts them for the version, and a stopping serve
/// keeps the period in `reports/page-errors.json`. A kind that is not a word is refused
/// with the agent's reason; a POST from another origin, or without the shim header, is refused.
/// A post that never reached the agent gives its count to the next one.
@Suite(.serialized) struct PageProblemsServeTests {
    @Test func errorsAfterTheAcknowledgementReachTheAgent() async throws {
        let throwing = """
            WebAppLocalServer.startupDidComplete(function () {
              setTimeout(function () { throw new Error("boom after start"); }, 0);
              Promise.reject(new Error("sync refused"));
              WebAppLocalServer.reportProblem("bad kind!").then(function () { out("bad", "resolved"); }, function (e) { out("bad", e.message); });
              setTimeout(function () {
                WebAppLocalServer.reportProblem("sync-failed").then(function () { out("posted", "yes"); }, function (e) { out("posted", e.message); });
              }, 200);
            });
            """
        try await Self.withServedPage(label: "problems-serve", script: throwing) { stub, rig, serve, page in
            func results() -> [String: String] {
                stub.requests.filter { $0.path == "/result" }.reduce(into: [:]) { $0.merge($1.queryItems) { a, _ in a } }
            }
            try await Poll.until("the page's problems posted", timeout: 120, every: .milliseconds(200)) {
                results()["posted"] != nil && results()["bad"] != nil
            }
            page.close()
            #expect(results()["posted"] == "yes", "\(results())")
            #expect(
                results()["bad"] == "reportProblem: the kind 'bad kind!' may hold only letters, digits, '-', '_' and '.'",
                "the agent's reason: \(results())")

            let url = serve.baseURL + "__clientctl/problems"
            let json = ["X-Clientctl-Shim: 1", "Content-Type: application/json"]
            let body = Data(#"{"errors":1000,"version":"1.0.0"}"#.utf8)
            let foreign = try await Curl.request(url, method: "POST", headers: json + ["Origin: http://evil.example.com"], body: body)
            #expect(foreign.status == 403, "another origin is refused: \(foreign.status) \(foreign.body)")
            let bare = try await Curl.request(url, method: "POST", headers: ["Content-Type: application/json"], body: body)
            #expect(bare.status == 403, "no shim header: \(bare.status) \(bare.body)")
            let malformed = try await Curl.request(url, method: "POST", headers: json, body: Data(#"{"errors":"many"}"#.utf8))
            #expect(malformed.status == 400 && malformed.body.contains("must be a whole number"), "\(malformed.status) \(malformed.body)")
            #expect(serve.stop(SIGTERM) == 0, "\(serve.stderr)")

            let saved = try Data(contentsOf: URL(fileURLWithPath: rig.root + "/reports/page-errors.json"))
            let tally = try JSONSerialization.jsonObject(with: saved) as? [String: Any]
            #expect(tally?["version"] as? String == "1.0.0", "\(tally ?? [:])")
            #expect(tally?["problems"] as? Int == 3, "the error, the rejection and the app's problem, none refused: \(tally ?? [:])")
            let messages = Set(tally?["messages"] as? [String] ?? [])
            #expect(messages.contains { $0.hasPrefix("Uncaught Error: boom after start @ /") }, "\(messages)")
            #expect(messages.contains("Unhandled rejection: sync refused") && messages.contains("app: sync-failed"), "\(messages)")
        }
    }

    /// Chromium's `fetch` rejects with a TypeError when a request gets no answer (the Fetch
    /// standard's "network error"); the page's wrapper makes the first problems post end so.
    @Test func aProblemsPostThatGotNoAnswerIsSentAgain() async throws {
        let failingOnce = """
            var realFetch = window.fetch, attempts = 0;
            window.fetch = function (url, init) {
              if (String(url).indexOf("__clientctl/problems") < 0) return realFetch.apply(this, arguments);
              var attempt = ++attempts;
              if (attempt === 1) { out("failed", "1"); return Promise.reject(new TypeError("Failed to fetch")); }
              return realFetch.apply(this, arguments).then(function (r) { out("answered", attempt + ":" + r.status); return r; });
            };
            WebAppLocalServer.startupDidComplete(function () {
              setTimeout(function () { throw new Error("lost once"); }, 0);
            });
            """
        try await Self.withServedPage(label: "problems-retry", script: failingOnce) { stub, rig, serve, page in
            func values(_ key: String) -> [String] {
                stub.requests.filter { $0.path == "/result" }.compactMap { $0.queryItems[key] }
            }
            try await Poll.until("the problems posted again", timeout: 120, every: .milliseconds(200)) { !values("answered").isEmpty }
            page.close()
            #expect(values("failed") == ["1"] && values("answered") == ["2:200"], "\(stub.requests.map(\.queryItems))")
            #expect(serve.stop(SIGTERM) == 0, "\(serve.stderr)")
            let saved = try Data(contentsOf: URL(fileURLWithPath: rig.root + "/reports/page-errors.json"))
            let tally = try JSONSerialization.jsonObject(with: saved) as? [String: Any]
            #expect(tally?["problems"] as? Int == 1, "the error the first post lost: \(tally ?? [:])")
            #expect((tally?["messages"] as? [String] ?? []).contains { $0.hasPrefix("Uncaught Error: lost once @ /") }, "\(tally ?? [:])")
        }
    }

    /// Runs `body` with version 1.0.0 of `script` installed and open in headless Chromium
    /// under `serve`; the script may call `out(k, v)`, which reaches `stub` as `/result?k=v`.
    private static func withServedPage(
        label: String, script: String, _ body: (LoopbackHTTPServer, ReleaseRig, ServeProcess, OpenChromiumPage) async throws -> Void
    ) async throws {
        let stub = try LoopbackHTTPServer { _ in .text("ok") }
        defer { stub.stop() }
        let rig = try await ReleaseRig(startupTimeout: 60, label: label, initArguments: ["--report-url", "http://127.0.0.1:9/"])
        let out = """
            function out(k, v) { fetch("http://127.0.0.1:\(stub.port)/result?" + k + "=" + encodeURIComponent(v), { mode: "no-cors" }); }

            """
        try await rig.publish("1.0.0", script: out + script)
        try await rig.run(["install", "--root", rig.root])
        let serve = try await ServeProcess(root: rig.root, scratch: rig.tmp.path)
        let page = try OpenChromiumPage(serve.baseURL)
        defer { page.close() }
        try await body(stub, rig, serve, page)
    }
}

import ClientServer
import ClientShim
import ClientUpdater
import Foundation
import Synchronization
import TestSupport
import Testing

/// Issue 9: `serve` answers only requests that name its own loopback listener (DNS
/// rebinding), refuses POSTs from other origins, and hands the page's version to the
/// control handler (409 when the handler refuses it). Raw requests, so every header is
/// exactly what the test wrote.
@Suite struct HostGuardTests {
    func withServer(_ handler: some ControlHandler, _ body: @Sendable (Int) async throws -> Void) async throws {
        let server = try ClientServer(configuration: ServerHarness.configuration(), control: handler, logger: ServerHarness.quietLogger)
        try await ServerHarness.withServer(server, body)
    }

    @Test func onlyHostsNamingThisListenerAreAnswered() async throws {
        let handler = VersionRecordingHandler()
        try await withServer(handler) { port in
            for host in ["127.0.0.1:\(port)", "localhost:\(port)", "LOCALHOST:\(port)", "[::1]:\(port)"] {
                let ok = try await LoopbackHTTP.raw(port: port, "GET /__clientctl/status HTTP/1.1\r\nHost: \(host)\r\n")
                #expect(ok.status == 200, "Host \(host)")
            }
            // The issue's rebinding request, then other names and ports, on every kind of route.
            let foreign = [
                "evil.example.com:\(port)", "127.0.0.1", "127.0.0.1:\(port + 1)", "localhost.evil.example:\(port)",
                "127.0.0.2:\(port)", "0.0.0.0:\(port)", "[::1]",
            ]
            for host in foreign {
                for target in ["GET /", "GET /app.js", "GET /__clientctl/status", "GET /__clientctl/events", "POST /__clientctl/startup-complete"] {
                    var head = "\(target) HTTP/1.1\r\nHost: \(host)\r\nX-Clientctl-Shim: 1\r\n"
                    if target.hasPrefix("POST") { head += "Origin: http://\(host)\r\n" }
                    let refused = try await LoopbackHTTP.raw(port: port, head)
                    #expect(refused.status == 421, "\(target) with Host \(host)")
                    #expect(refused["content-type"] == "application/json")
                    let error = try JSONDecoder().decode([String: String].self, from: refused.body)["error"]
                    #expect(error?.contains("Host \(host) is not this server") == true, "\(String(describing: error))")
                }
            }
            // No Host at all (HTTP/1.0), and a second Host after a good one.
            #expect(try await LoopbackHTTP.raw(port: port, "GET /__clientctl/status HTTP/1.0\r\n").status == 421)
            let twice = try await LoopbackHTTP.raw(
                port: port, "GET /__clientctl/status HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nHost: evil.example.com\r\n")
            #expect(twice.status == 421)
        }
        #expect(!handler.calls.contains("startupDidComplete"), "no refused request reached the updater")
    }

    @Test func postsFromAnotherOriginAreRefused() async throws {
        let handler = VersionRecordingHandler()
        try await withServer(handler) { port in
            let post = "POST /__clientctl/startup-complete HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nX-Clientctl-Shim: 1\r\n"
            for origin in [
                "http://evil.example.com:\(port)", "http://127.0.0.1:\(port + 1)", "http://localhost:\(port)",
                "https://127.0.0.1:\(port)", "null",
            ] {
                let refused = try await LoopbackHTTP.raw(port: port, post + "Origin: \(origin)\r\n")
                #expect(refused.status == 403, "Origin \(origin)")
                let error = try JSONDecoder().decode([String: String].self, from: refused.body)["error"] ?? ""
                #expect(error == "a POST from origin \(origin) is refused: only pages of http://127.0.0.1:\(port) may post here")
            }
            #expect(handler.calls.isEmpty)
            #expect(try await LoopbackHTTP.raw(port: port, post + "Origin: http://127.0.0.1:\(port)\r\n").status == 200, "the page's own origin")
            #expect(try await LoopbackHTTP.raw(port: port, post).status == 200, "no Origin: not a browser, judged by Host and the shim header")
            // GETs are not judged by Origin (a cross-origin GET cannot read the answer anyway).
            let get = try await LoopbackHTTP.raw(
                port: port, "GET /__clientctl/status HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nOrigin: http://evil.example.com\r\n")
            #expect(get.status == 200)
        }
    }

    @Test func thePagesVersionReachesTheHandler() async throws {
        let handler = VersionRecordingHandler()
        try await withServer(handler) { port in
            let head = { (name: String) in
                "POST /__clientctl/\(name) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nX-Clientctl-Shim: 1\r\nContent-Type: application/json\r\n"
            }
            for name in ["startup-complete", "check", "switch-to-pending"] {
                #expect(try await LoopbackHTTP.raw(port: port, head(name), body: #"{"version":"1.3.0"}"#).status == 200)
            }
            #expect(try await LoopbackHTTP.raw(port: port, head("startup-complete"), body: "{}").status == 200)
            #expect(try await LoopbackHTTP.raw(port: port, head("startup-complete")).status == 200, "an empty body names no version")
            let conflict = try await LoopbackHTTP.raw(port: port, head("startup-complete"), body: #"{"version":"1.1.0"}"#)
            #expect(conflict.status == 409)
            #expect(conflict.text == #"{"error":"startup complete of 1.1.0 refused: 1.3.0 is on trial, not 1.1.0"}"#)
            for bad in ["[1]", #"{"version":7}"#, "{", #"{"version":""}"#] {
                let refused = try await LoopbackHTTP.raw(port: port, head("startup-complete"), body: bad)
                #expect(refused.status == 400, "\(bad)")
            }
        }
        #expect(
            handler.versions == [
                "startupDidComplete 1.3.0", "checkForUpdates 1.3.0", "switchToPendingVersion 1.3.0",
                "startupDidComplete nil", "startupDidComplete nil", "startupDidComplete 1.1.0",
            ])
    }
}

/// The shim names the version its page was served with on every POST (run in Node.js).
@Suite struct ShimVersionTests {
    static func js(_ version: String) -> String {
        let element = Shim().scriptElement(version: version)
        let start = element.firstIndex(of: ">").map { element.index(after: $0) } ?? element.startIndex
        return String(element[start...].dropLast("</script>".count))
    }

    @Test func theShimSendsItsVersionAndReportsARefusal() async throws {
        let handler = VersionRecordingHandler()
        let server = try ClientServer(configuration: ServerHarness.configuration(), control: handler, logger: ServerHarness.quietLogger)
        let results = try await ServerHarness.withServer(server) { port in
            try await ShimScriptTests.runNode(
                """
                const origin = "http://127.0.0.1:\(port)";
                const realFetch = fetch;
                globalThis.fetch = (url, opts) => realFetch(origin + url, opts);
                globalThis.window = globalThis;
                const out = {};
                const done = () => { console.log(JSON.stringify(out)); process.exit(0); };
                \(Self.js("1.3.0"))
                const current = window.WebAppLocalServer;
                delete window.WebAppLocalServer;
                \(Self.js("1.1.0"))
                const old = window.WebAppLocalServer;
                current.startupDidComplete(() => {
                  current.checkForUpdates(() => {
                    current.switchToPendingVersion(() => {
                      old.onError((e) => { out.oldTab = e.message; done(); });
                      old.startupDidComplete(() => { out.oldTab = "accepted"; done(); });
                    }, (e) => { out.switchError = e.message; done(); });
                  });
                });
                setTimeout(() => { out.timeout = "yes"; done(); }, 30000);
                """)
        }
        #expect(results["timeout"] == nil && results["switchError"] == nil, "\(results)")
        #expect(results["oldTab"] == "startup complete of 1.1.0 refused: 1.3.0 is on trial, not 1.1.0")
        #expect(
            handler.versions.filter { !$0.hasPrefix("status") } == [
                "startupDidComplete 1.3.0", "checkForUpdates 1.3.0",
                "switchToPendingVersion 1.3.0", "startupDidComplete 1.1.0",
            ])
    }
}

/// Records the version each POST named; refuses an acknowledgement of anything but 1.3.0.
final class VersionRecordingHandler: ControlHandler {
    private let log = Mutex<[String]>([])
    var versions: [String] { log.withLock { $0 } }
    var calls: [String] { versions.map { String($0.split(separator: " ")[0]) } }

    private func record(_ call: String, _ version: String?) {
        log.withLock { $0.append("\(call) \(version ?? "nil")") }
    }

    func startupDidComplete(version: String?) async throws -> ControlStatus {
        record("startupDidComplete", version)
        if let version, version != "1.3.0" {
            throw UpdaterError(.conflict, WatchdogEvent.refused(acknowledged: version, onTrial: "1.3.0").message)
        }
        return ControlStatus(current: "1.3.0", lastKnownGood: "1.3.0")
    }
    func checkForUpdates(version: String?) async throws -> ControlStatus {
        record("checkForUpdates", version)
        return ControlStatus(current: "1.3.0")
    }
    func switchToPendingVersion(version: String?) async throws -> ControlStatus {
        record("switchToPendingVersion", version)
        return ControlStatus(current: "1.3.0")
    }
    func startupDidComplete() async throws -> ControlStatus { try await startupDidComplete(version: nil) }
    func checkForUpdates() async throws -> ControlStatus { try await checkForUpdates(version: nil) }
    func switchToPendingVersion() async throws -> ControlStatus { try await switchToPendingVersion(version: nil) }
    func status() async throws -> ControlStatus { ControlStatus(current: "1.3.0", inTrial: true) }
    func events() async -> AsyncStream<ControlEvent> { AsyncStream { $0.finish() } }
}

import ClientServer
import ClientShim
import ClientUpdater
import Foundation
import Synchronization
import TestSupport
import Testing

/// The page's `WebAppLocalServer.holdDownloads(seconds)` under `serve`
/// (docs/download-policy.md#holds): the real shim in Node.js posts its lease to
/// `POST /__clientctl/hold-downloads` of a real server; 0 and `pagehide` let go; a request
/// from another origin, or without the shim header, is refused before the handler.
@Suite struct HoldDownloadsControlTests {
    /// Records each download hold as `LEASE SECONDS`; a lease ends `duration` after
    /// 2027-01-15T08:00:00Z.
    final class HoldRecorder: ControlHandler {
        private let log = Mutex<[String]>([])
        var holds: [String] { log.withLock { $0 } }

        func holdDownloads(lease: String, for duration: Duration, version: String?) async throws -> Date {
            log.withLock { $0.append("\(lease) \(duration.components.seconds)") }
            return Date(timeIntervalSince1970: 1_800_000_000 + duration.inSeconds)
        }
        func holdUpdate(lease: String, for duration: Duration, version: String?) async throws -> Date {
            log.withLock { $0.append("apply \(lease)") }
            return Date()
        }
        func startupDidComplete() async throws -> ControlStatus { ControlStatus(current: "1.0.0") }
        func checkForUpdates() async throws -> ControlStatus { ControlStatus(current: "1.0.0") }
        func switchToPendingVersion() async throws -> ControlStatus { ControlStatus(current: "1.0.0") }
        func status() async throws -> ControlStatus { ControlStatus(current: "1.0.0") }
        func events() async -> AsyncStream<ControlEvent> { AsyncStream { $0.finish() } }
    }

    /// The shim's serve backend: `holdDownloads(120)` posts the page's lease and resolves to
    /// its end; a negative hold is refused in the page; `holdDownloads(0)` and the page's
    /// `pagehide` let go of the same lease; the apply lease is another endpoint's.
    @Test func thePageHoldsDownloadsThroughTheShim() async throws {
        let handler = HoldRecorder()
        let server = try ClientServer(configuration: ServerHarness.configuration(), control: handler, logger: ServerHarness.quietLogger)
        let results = try await ServerHarness.withServer(server) { port in
            try await ShimScriptTests.runNode(
                """
                const origin = "http://127.0.0.1:\(port)";
                const realFetch = fetch;
                globalThis.fetch = (url, opts) => realFetch(origin + url, opts);
                globalThis.window = globalThis;
                const listeners = {};
                window.addEventListener = (name, fn) => { (listeners[name] = listeners[name] || []).push(fn); };
                const fire = (name) => (listeners[name] || []).forEach((fn) => fn({ type: name }));
                \(ShimScriptTests.shimJS(Shim()))
                const out = {};
                WebAppLocalServer.holdDownloads(120).then((r) => {
                  out.until = r.until;
                  return WebAppLocalServer.holdDownloads(-1).catch((e) => { out.negative = e.message; });
                }).then(() => WebAppLocalServer.holdDownloads("soon").catch((e) => { out.text = e.message; }))
                .then(() => WebAppLocalServer.holdDownloads(0)).then(() => {
                  fire("pagehide");
                  setTimeout(() => { console.log(JSON.stringify(out)); process.exit(0); }, 1000);
                }).catch((e) => { out.error = String(e && e.message); console.log(JSON.stringify(out)); process.exit(0); });
                setTimeout(() => { out.timeout = "yes"; console.log(JSON.stringify(out)); process.exit(0); }, 30000);
                """)
        }
        #expect(results["timeout"] == nil && results["error"] == nil, "\(results)")
        #expect(results["until"] == "2027-01-15T08:02:00Z")
        #expect(results["negative"] == "holdDownloads takes a number of seconds, 0 or more")
        #expect(results["text"] == "holdDownloads takes a number of seconds, 0 or more")
        let holds = handler.holds
        #expect(holds.count == 3, "hold, 0, pagehide: \(holds)")
        let lease = holds.first?.split(separator: " ").first.map(String.init) ?? ""
        #expect(lease.hasPrefix("page-") && lease.count > 5, "the page's lease: \(holds)")
        #expect(holds == ["\(lease) 120", "\(lease) 0", "\(lease) 0"], "one lease, let go by 0 and by pagehide: \(holds)")
    }

    /// A local process (`curl`) holds downloads with the shim header and a lease of its own;
    /// a POST from another origin, or without the header, or without a lease, never reaches
    /// the handler; a GET is not allowed.
    @Test func aLocalProcessHoldsAndAnotherOriginIsRefused() async throws {
        let handler = HoldRecorder()
        let server = try ClientServer(configuration: ServerHarness.configuration(), control: handler, logger: ServerHarness.quietLogger)
        try await ServerHarness.withServer(server) { port in
            let head = "POST /__clientctl/hold-downloads HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: application/json\r\n"
            let body = #"{"lease":"backup","seconds":600}"#
            for origin in ["http://evil.example.com", "http://127.0.0.1:\(port + 1)", "null"] {
                let refused = try await LoopbackHTTP.raw(port: port, head + "X-Clientctl-Shim: 1\r\nOrigin: \(origin)\r\n", body: body)
                #expect(refused.status == 403, "Origin \(origin): \(refused.text)")
            }
            let bare = try await LoopbackHTTP.raw(port: port, head, body: body)
            #expect(bare.status == 403 && bare.text.contains("needs the X-Clientctl-Shim: 1 header"), "\(bare.text)")
            let get = try await LoopbackHTTP.raw(port: port, "GET /__clientctl/hold-downloads HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n")
            #expect(get.status == 405 && get["allow"] == "POST")
            let noLease = try await LoopbackHTTP.raw(port: port, head + "X-Clientctl-Shim: 1\r\n", body: #"{"seconds":600}"#)
            #expect(noLease.status == 400 && noLease.text.contains(#"the body needs \"lease\" and \"seconds\""#), "\(noLease.text)")
            #expect(handler.holds.isEmpty, "no refused request reached the handler: \(handler.holds)")

            let held = try await LoopbackHTTP.raw(port: port, head + "X-Clientctl-Shim: 1\r\n", body: body)
            #expect(held.status == 200, "\(held.text)")
            #expect(try JSONDecoder().decode([String: String].self, from: held.body) == ["until": "2027-01-15T08:10:00Z"])
            let ownOrigin = try await LoopbackHTTP.raw(
                port: port, head + "X-Clientctl-Shim: 1\r\nOrigin: http://127.0.0.1:\(port)\r\n", body: #"{"lease":"backup","seconds":0}"#)
            #expect(ownOrigin.status == 200, "the page's own origin: \(ownOrigin.text)")
        }
        #expect(handler.holds == ["backup 600", "backup 0"])
    }
}

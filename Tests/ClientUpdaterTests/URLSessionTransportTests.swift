import ClientUpdater
import Foundation
import Testing
import TestSupport

/// The production transport against the real loopback server (and `file:` URLs).
@Suite struct URLSessionTransportTests {
    let scratch: FetchScratch
    let payload = fetchTestBytes(300_000)
    init() throws {
        scratch = try FetchScratch()
        try scratch.write("app.tgz", payload)
        try scratch.write("sub/manifest.json", Data("{\"a\":1}".utf8))
    }

    func serve(_ faults: LoopbackFaults = LoopbackFaults()) throws -> LoopbackHTTPServer {
        try LoopbackHTTPServer(handler: faults.wrap(LoopbackHTTPServer.folder(scratch.path)))
    }

    @Test func streamsBodyAndRecordsRequest() async throws {
        let server = try serve()
        defer { server.stop() }
        let (response, body) = try await URLSessionTransport().fetchAll(server.url("/app.tgz?x=1"), headers: ["X-Test": "yes"])
        #expect(response.status == 200)
        #expect(body == payload)
        #expect(response[header: "Content-Length"] == "300000")
        #expect(response[header: "etag"] != nil)
        let request = try #require(server.requests.first)
        #expect(request.method == "GET" && request.path == "/app.tgz" && request.query == "x=1")
        #expect(request[header: "x-test"] == "yes")
        #expect(request[header: "accept-encoding"] == "identity")
        #expect(server.log.first?.bodyBytesSent == 300_000)
    }

    @Test func conditionalGetAndRange() async throws {
        let server = try serve()
        defer { server.stop() }
        let transport = URLSessionTransport()
        let (first, _) = try await transport.fetchAll(server.url("/sub/manifest.json"))
        let etag = try #require(first[header: "etag"])
        let (second, body) = try await transport.fetchAll(server.url("/sub/manifest.json"), headers: ["If-None-Match": etag])
        #expect(second.status == 304)
        #expect(body.isEmpty)
        let (ranged, tail) = try await transport.fetchAll(server.url("/app.tgz"), headers: ["Range": "bytes=1000-"])
        #expect(ranged.status == 206)
        #expect(ranged[header: "content-range"] == "bytes 1000-299999/300000")
        #expect(tail == payload.subdata(in: 1000..<300_000))
    }

    @Test func statusIsReturnedNotThrown() async throws {
        let server = try serve()
        defer { server.stop() }
        let (response, _) = try await URLSessionTransport().fetchAll(server.url("/missing"))
        #expect(response.status == 404)
    }

    @Test func redirectIsNotFollowed() async throws {
        let server = try LoopbackHTTPServer { _ in
            LoopbackResponse(status: 302, headers: [("Location", "http://127.0.0.1:1/elsewhere")])
        }
        defer { server.stop() }
        let (response, _) = try await URLSessionTransport().fetchAll(server.url("/x"))
        #expect(response.status == 302)
        #expect(server.requests.count == 1)
    }

    @Test func refusedConnectionIsANetworkError() async throws {
        let port = try LoopbackHTTPServer.unusedPort()
        let url = try #require(URL(string: "http://127.0.0.1:\(port)/app.tgz"))
        let error = await #expect(throws: UpdaterError.self) { try await URLSessionTransport().fetchAll(url) }
        #expect(error?.code == .network)
        #expect(error?.transportFailure == .refused)
        #expect(error?.message == "GET \(url.absoluteString): connection refused")
    }

    @Test func resetMidBodyIsANetworkError() async throws {
        let faults = LoopbackFaults()
        faults.add(.reset(afterBytes: 50_000))
        let server = try serve(faults)
        defer { server.stop() }
        let error = await #expect(throws: UpdaterError.self) { try await URLSessionTransport().fetchAll(server.url("/app.tgz")) }
        #expect(error?.code == .network)
        #expect(error?.transportFailure == .reset || error?.transportFailure == .truncated(received: 50_000, expected: 300_000))
    }

    @Test func truncatedBodyIsANetworkError() async throws {
        let faults = LoopbackFaults()
        faults.add(.truncate(afterBytes: 1234))
        let server = try serve(faults)
        defer { server.stop() }
        let error = await #expect(throws: UpdaterError.self) { try await URLSessionTransport().fetchAll(server.url("/app.tgz")) }
        #expect(error?.code == .network)
        #expect(error?.message.contains("truncated") == true || error?.transportFailure == .reset, "\(error?.message ?? "")")
    }

    @Test func stalledBodyTimesOutOnIdle() async throws {
        let faults = LoopbackFaults()
        faults.add(.stall(afterBytes: 1000))
        let server = try serve(faults)
        defer { server.stop() }
        let error = await #expect(throws: UpdaterError.self) {
            try await URLSessionTransport().fetchAll(server.url("/app.tgz"), idleTimeout: 0.3)
        }
        #expect(error?.transportFailure == .timedOut(seconds: 0.3))
    }

    @Test func slowDripWithinIdleTimeoutSucceeds() async throws {
        let faults = LoopbackFaults()
        faults.add(.drip(bytes: 20_000, every: 0.05))
        let server = try serve(faults)
        defer { server.stop() }
        // 15 pauses of 50 ms: longer in total than the idle timeout, never idle that long.
        let (response, body) = try await URLSessionTransport().fetchAll(server.url("/app.tgz"), idleTimeout: 0.5)
        #expect(response.status == 200)
        #expect(body == payload)
    }

    @Test func throwingSinkAbortsTheTransfer() async throws {
        struct Enough: Error {}
        let server = try serve()
        defer { server.stop() }
        await #expect(throws: Enough.self) {
            _ = try await URLSessionTransport().get(TransportRequest(url: server.url("/app.tgz"))) { _ in throw Enough() }
        }
    }

    @Test func fileURLs() async throws {
        let transport = URLSessionTransport()
        let url = URL(fileURLWithPath: scratch.path + "/app.tgz")
        let (ok, body) = try await transport.fetchAll(url)
        #expect(ok.status == 200 && body == payload && ok[header: "content-length"] == "300000")
        let (ranged, tail) = try await transport.fetchAll(url, headers: ["Range": "bytes=299990-"])
        #expect(ranged.status == 206 && tail == payload.suffix(10))
        let (missing, _) = try await transport.fetchAll(URL(fileURLWithPath: scratch.path + "/nope"))
        #expect(missing.status == 404)
    }

    @Test func unsupportedScheme() async throws {
        let url = try #require(URL(string: "ftp://127.0.0.1/x"))
        let error = await #expect(throws: UpdaterError.self) { try await URLSessionTransport().fetchAll(url) }
        #expect(error?.code == .unsupported)
    }
}

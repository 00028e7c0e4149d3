import ClientFoundation
import ClientUpdater
import ClientUpdaterHTTP
import Foundation
import TestSupport
import Testing

extension HTTPSuites {
    /// ``HTTPTransport`` (and ``DefaultTransport`` for `file:`) against the real loopback
    /// server: the behaviour the socket and URLSession transports had, kept.
    @Suite struct HTTPTransportTests {
        let scratch: HTTPScratch
        let payload = httpTestBytes(300_000)
        init() throws {
            scratch = try HTTPScratch()
            try scratch.write("app.tgz", payload)
            try scratch.write("sub/manifest.json", Data("{\"a\":1}".utf8))
        }

        func serve(_ faults: LoopbackFaults = LoopbackFaults()) throws -> LoopbackHTTPServer {
            try LoopbackHTTPServer(handler: faults.wrap(LoopbackHTTPServer.folder(scratch.path)))
        }

        @Test func streamsBodyAndRecordsRequest() async throws {
            let server = try serve()
            defer { server.stop() }
            let (response, body) = try await HTTPTransport().fetchAll(server.url("/app.tgz?x=1"), headers: ["X-Test": "yes"])
            #expect(response.status == 200)
            #expect(body == payload)
            #expect(response[header: "Content-Length"] == "300000")
            #expect(response[header: "etag"] != nil)
            let request = try #require(server.requests.first)
            #expect(request.method == "GET" && request.path == "/app.tgz" && request.query == "x=1")
            #expect(request[header: "x-test"] == "yes")
            #expect(request[header: "accept-encoding"] == "identity")
            #expect(request[header: "user-agent"] == "clientctl/\(ClientctlVersion.string)")
            #expect(try await server.settledLog().first?.bodyBytesSent == 300_000)
        }

        @Test func conditionalGetAndRange() async throws {
            let server = try serve()
            defer { server.stop() }
            let transport = DefaultTransport()
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
            let (response, _) = try await HTTPTransport().fetchAll(server.url("/missing"))
            #expect(response.status == 404)
        }

        @Test func aRedirectWithoutLocationIsReturned() async throws {
            let server = try LoopbackHTTPServer { _ in LoopbackResponse(status: 302) }
            defer { server.stop() }
            let (response, _) = try await HTTPTransport().fetchAll(server.url("/x"))
            #expect(response.status == 302)
            #expect(server.requests.count == 1)
        }

        @Test func refusedConnectionIsANetworkError() async throws {
            let refusing = try LoopbackHTTPServer.refusingPort()
            let url = try #require(URL(string: "http://127.0.0.1:\(refusing.port)/app.tgz"))
            let error = await #expect(throws: HTTPTransportError.self) { try await HTTPTransport().fetchAll(url) }
            #expect(error?.code == .network)
            #expect(error?.transportFailure == .refused)
            #expect(error?.message == "GET \(url.absoluteString): connection refused")
        }

        @Test func resetMidBodyIsANetworkError() async throws {
            let faults = LoopbackFaults()
            faults.add(.reset(afterBytes: 50_000))
            let server = try serve(faults)
            defer { server.stop() }
            let error = await #expect(throws: HTTPTransportError.self) { try await HTTPTransport().fetchAll(server.url("/app.tgz")) }
            #expect(error?.code == .network)
            // The reset may discard bytes still in flight: the body is cut at or before 50,000.
            switch error?.transportFailure {
            case .reset: break
            case .truncated(let received, let expected): #expect(received <= 50_000 && expected == 300_000)
            default: Issue.record("expected a reset or a truncation, got \(error?.message ?? "nothing")")
            }
        }

        @Test func truncatedBodyIsANetworkError() async throws {
            let faults = LoopbackFaults()
            faults.add(.truncate(afterBytes: 1234))
            let server = try serve(faults)
            defer { server.stop() }
            let error = await #expect(throws: HTTPTransportError.self) { try await HTTPTransport().fetchAll(server.url("/app.tgz")) }
            #expect(error?.code == .network)
            #expect(error?.transportFailure == .truncated(received: 1234, expected: 300_000), "\(error?.message ?? "")")
        }

        @Test func stalledBodyTimesOutOnIdle() async throws {
            let faults = LoopbackFaults()
            faults.add(.stall(afterBytes: 1000))
            let server = try serve(faults)
            defer { server.stop() }
            let error = await #expect(throws: HTTPTransportError.self) {
                try await HTTPTransport().fetchAll(server.url("/app.tgz"), idleTimeout: .milliseconds(300))
            }
            #expect(error?.transportFailure == .timedOut(.milliseconds(300)))
        }

        @Test func slowDripWithinIdleTimeoutSucceeds() async throws {
            let faults = LoopbackFaults()
            faults.add(.drip(bytes: 20_000, every: 0.2))
            let server = try serve(faults)
            defer { server.stop() }
            // 15 pauses of 0.2 s: longer in total than the idle timeout, never idle that long
            // (with room for a loaded machine to starve the server thread for a while).
            let (response, body) = try await HTTPTransport().fetchAll(server.url("/app.tgz"), idleTimeout: .seconds(2))
            #expect(response.status == 200)
            #expect(body == payload)
        }

        @Test func throwingSinkAbortsTheTransfer() async throws {
            struct Enough: Error {}
            let server = try serve()
            defer { server.stop() }
            await #expect(throws: Enough.self) {
                _ = try await HTTPTransport().get(TransportRequest(url: server.url("/app.tgz"))) { _ in throw Enough() }
            }
        }

        @Test func fileURLs() async throws {
            let transport = DefaultTransport()
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
            let error = await #expect(throws: HTTPTransportError.self) { try await DefaultTransport().fetchAll(url) }
            #expect(error?.code == .unsupported)
            let file = await #expect(throws: HTTPTransportError.self) {
                try await HTTPTransport().fetchAll(URL(fileURLWithPath: scratch.path + "/app.tgz"))
            }
            #expect(file?.code == .unsupported, "file: is DefaultTransport's, not HTTPTransport's")
        }

        @Test func neverDecodesContentEncoding() async throws {
            let gzipped = Data([0x1f, 0x8b, 0x08, 0x00, 1, 2, 3, 4])
            let server = try LoopbackHTTPServer { _ in
                LoopbackResponse(status: 200, headers: [("Content-Encoding", "gzip")], body: .data(gzipped))
            }
            defer { server.stop() }
            let (response, body) = try await HTTPTransport().fetchAll(server.url("/m.json"))
            #expect(response[header: "content-encoding"] == "gzip")
            #expect(body == gzipped)
            #expect(server.requests.first?[header: "accept-encoding"] == "identity")
        }

        @Test func decodesChunkedBodies() async throws {
            let server = try LoopbackHTTPServer { _ in
                var r = LoopbackResponse(
                    status: 200, headers: [("Transfer-Encoding", "chunked")],
                    body: .data(Data("5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nX-Trailer: 1\r\n\r\n".utf8)))
                r.omitContentLength = true
                return r
            }
            defer { server.stop() }
            let (response, body) = try await HTTPTransport().fetchAll(server.url("/c"))
            #expect(response.status == 200 && body == Data("hello, world".utf8))
        }

        @Test func reportsUnknownHostAsDNS() async throws {
            let url = try #require(URL(string: "http://no-such-host.invalid/x"))
            let error = await #expect(throws: HTTPTransportError.self) { try await HTTPTransport().fetchAll(url) }
            #expect(error?.transportFailure == .dns)
            #expect(error?.message == "GET http://no-such-host.invalid/x: host name not found (DNS)")
        }

        @Test func cancellingTheTaskStopsAStalledTransfer() async throws {
            let faults = LoopbackFaults()
            faults.add(.stall(afterBytes: 10))
            let server = try serve(faults)
            defer { server.stop() }
            let task = Task { try await HTTPTransport().fetchAll(server.url("/app.tgz"), idleTimeout: .seconds(30)) }
            // Stalled: the server sent its 10 bytes and now sends nothing.
            try await Poll.until("the server to stall after 10 bytes") { server.log.first.map { $0.finished && $0.bodyBytesSent == 10 } ?? false }
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
        }

        @Test func defaultTransportHandsHTTPSToHTTPTransport() async throws {
            let refusing = try LoopbackHTTPServer.refusingPort()
            let url = try #require(URL(string: "https://127.0.0.1:\(refusing.port)/m.json"))
            let error = await #expect(throws: HTTPTransportError.self) { try await DefaultTransport().fetchAll(url) }
            #expect(error?.transportFailure == .refused, "\(error?.message ?? "")")
        }

        @Test func reportsATruncatedChunkedBody() async throws {
            let server = try LoopbackHTTPServer { _ in
                var r = LoopbackResponse(
                    status: 200, headers: [("Transfer-Encoding", "chunked")],
                    body: .data(Data("a\r\n01234".utf8)))
                r.omitContentLength = true
                return r
            }
            defer { server.stop() }
            let error = await #expect(throws: HTTPTransportError.self) { try await HTTPTransport().fetchAll(server.url("/c")) }
            // A chunked body has no declared length: the early close is a lost connection.
            #expect(error?.transportFailure == .reset, "\(error?.message ?? "")")
        }
    }
}

import ClientFoundation
import ClientUpdater
import ClientUpdaterHTTP
import Foundation
import TestSupport
import Testing

/// The test server itself, checked with `curl` as an independent client.
@Suite struct LoopbackHTTPServerTests {
    @Test func servesFolderWithRangesAndETags() throws {
        let scratch = try FetchScratch()
        let payload = fetchTestBytes(10_000)
        try scratch.write("a/b.bin", payload)
        let server = try LoopbackHTTPServer(handler: LoopbackHTTPServer.folder(scratch.path, etag: .sha1))
        defer { server.stop() }
        let url = server.url("/a/b.bin").absoluteString
        let (rc, body) = try runCurl(["-f", url])
        #expect(rc == 0 && body == payload)
        let (_, head) = try runCurl(["-D", "-", "-o", "/dev/null", "-H", "Range: bytes=10-19", url])
        let headText = String(decoding: head, as: UTF8.self)
        #expect(headText.contains("206 Partial Content"))
        #expect(headText.contains("Content-Range: bytes 10-19/10000"))
        let sha1 = Digest.hex(.sha1, of: payload)
        #expect(headText.contains("ETag: \"\(sha1)\""))
        let (_, notModified) = try runCurl(["-w", "%{http_code}", "-o", "/dev/null", "-H", "If-None-Match: \"\(sha1)\"", url])
        #expect(String(decoding: notModified, as: UTF8.self) == "304")
        let (_, traversal) = try runCurl(["-w", "%{http_code}", "-o", "/dev/null", "--path-as-is", server.url("/../etc/passwd").absoluteString])
        #expect(String(decoding: traversal, as: UTF8.self) == "404")
        #expect(server.requests.map(\.path) == ["/a/b.bin", "/a/b.bin", "/a/b.bin", "/../etc/passwd"])
    }

    @Test func keepsConnectionsAliveAndRestartsOnSamePort() async throws {
        let server = try LoopbackHTTPServer { _ in .text("hi") }
        let transport = DefaultTransport()
        for _ in 0..<3 { _ = try await transport.fetchAll(server.url("/x")) }
        #expect(server.requests.count == 3)
        #expect(Set(server.requests.map(\.connection)).count == 1, "one keep-alive connection")
        let port = server.port
        server.stop()
        await #expect(throws: HTTPTransportError.self) { try await DefaultTransport().fetchAll(server.url("/x")) }
        try server.start()
        #expect(server.port == port)
        let (response, body) = try await DefaultTransport().fetchAll(server.url("/x"))
        #expect(response.status == 200 && body == Data("hi".utf8))
        server.stop()
    }

    @Test func dropsFirstConnectionsThenRecovers() async throws {
        let server = try LoopbackHTTPServer { _ in .text("ok") }
        defer { server.stop() }
        server.dropConnections(2)
        let transport = DefaultTransport()
        for _ in 0..<2 {
            let error = await #expect(throws: HTTPTransportError.self) { try await transport.fetchAll(server.url("/x")) }
            #expect(error?.code == .network)
        }
        let (response, _) = try await transport.fetchAll(server.url("/x"))
        #expect(response.status == 200)
        #expect(server.connectionsAccepted == 3)
        #expect(server.requests.count == 1)
    }

    @Test func faultsApplyPerPathAndCount() throws {
        let faults = LoopbackFaults()
        faults.add(.status(503), path: "/a", requests: 1...2)
        faults.add(.declaredLength(2), path: "/b")
        faults.add(.etag("\"wrong\""), path: "/c")
        let server = try LoopbackHTTPServer(
            handler: faults.wrap { _ in
                var r = LoopbackResponse.text("hello")
                r.setHeader("ETag", "\"right\"")
                return r
            })
        defer { server.stop() }
        let codes = try (0..<3).map { _ in
            String(decoding: try runCurl(["-w", "%{http_code}", "-o", "/dev/null", server.url("/a").absoluteString]).1, as: UTF8.self)
        }
        #expect(codes == ["503", "503", "200"])
        let (_, b) = try runCurl([server.url("/b").absoluteString])
        #expect(b == Data("he".utf8), "curl stops at the declared length")
        let (_, c) = try runCurl(["-D", "-", "-o", "/dev/null", server.url("/c").absoluteString])
        #expect(String(decoding: c, as: UTF8.self).contains("ETag: \"wrong\""))
    }

    @Test func manyConcurrentConnectionsAndCleanStop() async throws {
        let server = try LoopbackHTTPServer { request in .text(request.path) }
        let transport = DefaultTransport(settings: HTTPTransportSettings(maxConnectionsPerHost: 8))
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for i in 0..<40 {
                group.addTask {
                    let (_, body) = try await transport.fetchAll(server.url("/p\(i)"))
                    return body == Data("/p\(i)".utf8)
                }
            }
            for try await ok in group { #expect(ok) }
        }
        #expect(server.requests.count == 40)
        server.stop()
        server.stop()  // idempotent
    }

    /// Sockets on `port` that are listening or established, from /proc/net/tcp.
    func liveSockets(port: UInt16) throws -> Int {
        // Read to EOF: /proc files report size 0, so size-based reads stop early.
        let handle = try #require(FileHandle(forReadingAtPath: "/proc/net/tcp"))
        defer { try? handle.close() }
        let table = String(decoding: try handle.readAllRetryingInterrupts(), as: UTF8.self)
        let hex = String(port, radix: 16, uppercase: true)
        let hexPort = ":" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        return table.split(separator: "\n").dropFirst().filter { line in
            let fields = line.split(separator: " ")
            guard fields.count > 3 else { return false }
            return fields[1].hasSuffix(hexPort) && (fields[3] == "0A" || fields[3] == "01")
        }.count
    }

    @Test func stopClosesEverySocketEvenMidFault() async throws {
        let faults = LoopbackFaults()
        faults.add(.stall(afterBytes: 5), path: "/stall")
        faults.add(.drip(bytes: 1, every: 10), path: "/drip")
        let server = try LoopbackHTTPServer(handler: faults.wrap { _ in .text("0123456789") })
        let port = server.port
        let transport = DefaultTransport()
        for path in ["/stall", "/drip"] {
            await #expect(throws: HTTPTransportError.self) { try await transport.fetchAll(server.url(path), idleTimeout: .milliseconds(200)) }
        }
        // A connection that sent half a request: the server is blocked reading it.
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(client) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        addr.sin_addr = in_addr(s_addr: UInt32(0x7f00_0001).bigEndian)
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(rc == 0)
        _ = "GET /ok HTTP/1.1\r\n".withCString { send(client, $0, strlen($0), 0) }
        try await Poll.until("the server to accept the half-open connection") { server.connectionsAccepted >= 3 }
        let before = try liveSockets(port: port)
        #expect(before >= 2, "listening + the half-open request")
        let started = ContinuousClock.now
        server.stop()
        #expect(ContinuousClock.now - started < .seconds(5), "stop does not wait for drips or stalls to end")
        // The kernel may list a socket closed by another thread a moment longer on a loaded
        // machine: wait for the table with a generous cap, never for the machine.
        try await Poll.until("no listening or established socket left on the port", timeout: 60) {
            (try? liveSockets(port: port)) == 0
        }
    }
}

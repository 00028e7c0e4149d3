import ClientUpdater
import ClientUpdaterHTTP
import Foundation
import TestSupport
import Testing

/// `Downloader.fetchSmall`: the manifest path (cap, conditional GET, retries).
@Suite struct FetchSmallTests {
    let scratch: FetchScratch
    let faults = LoopbackFaults()
    let server: LoopbackHTTPServer
    let sleeper = RecordingSleeper()
    let downloader: Downloader
    let manifest = Data("{\"version\":\"1.0.0\"}".utf8)

    init() throws {
        scratch = try FetchScratch()
        try scratch.write("manifest.json", manifest)
        try scratch.write("big.json", Data(repeating: 0x20, count: 70_000))
        server = try LoopbackHTTPServer(handler: faults.wrap(LoopbackHTTPServer.folder(scratch.path)))
        // No false stall when the suite loads both cores.
        downloader = Downloader(transport: DefaultTransport(), sleeper: sleeper, idleTimeout: .seconds(10))
    }

    @Test func fetchesThenAnswersNotModifiedForTheSameETag() async throws {
        let first = try await downloader.fetchSmall(server.url("/manifest.json"))
        guard case .fetched(let body, let etag) = first else {
            Issue.record("expected a body")
            return
        }
        #expect(body == manifest)
        let tag = try #require(etag)
        let second = try await downloader.fetchSmall(server.url("/manifest.json"), ifNoneMatch: tag)
        #expect(second == .notModified(etag: tag))
        #expect(server.requests.map { $0[header: "if-none-match"] } == [nil, tag])
        #expect(try await server.settledLog().map(\.status) == [200, 304])
    }

    /// A feed that answers 503 with `Retry-After` (RFC 9110 §10.2.3) is not asked again sooner
    /// than it said, within the check's own retries: each wait is at least its 3 s.
    @Test func aRetryAfterWithinTheRetriesIsWaitedFor() async throws {
        faults.add(.custom { $0 = LoopbackResponse(status: 503, headers: [("Retry-After", "3")]) }, path: "/manifest.json", requests: 1...2)
        let result = try await downloader.fetchSmall(server.url("/manifest.json"))
        #expect(result.etag != nil, "the third request got the manifest")
        #expect(try await server.settledLog().map(\.status) == [503, 503, 200])
        #expect(sleeper.delays.count == 2 && sleeper.delays.allSatisfy { $0 >= .seconds(3) }, "\(sleeper.delays)")
    }

    /// A `Retry-After` longer than the check's retries ever wait ends the check at once; the
    /// error carries it, so the periodic schedule waits that long before the next check.
    @Test func aLongRetryAfterEndsTheCheckAndIsCarried() async throws {
        faults.add(.custom { $0 = LoopbackResponse(status: 503, headers: [("Retry-After", "120")]) }, path: "/manifest.json")
        let error = await #expect(throws: UpdaterError.self) { try await downloader.fetchSmall(server.url("/manifest.json")) }
        #expect(error?.httpStatus == 503)
        #expect(error.flatMap { HTTPStatusFailure.found(in: $0) }?.retryAfter == .seconds(120))
        #expect(server.requests.count == 1 && sleeper.delays.isEmpty, "no retry: \(sleeper.delays)")
    }

    /// A `Retry-After` given as an HTTP date (RFC 9110 §10.2.3) is read against the
    /// downloader's wall clock, the device's (`DeviceEngine.Options.now`), not the host's:
    /// on a device whose clock reads 16:00 UTC, "17:10:00 GMT" is 70 minutes away.
    @Test func aRetryAfterDateIsReadOnTheDevicesWallClock() async throws {
        faults.add(
            .custom { $0 = LoopbackResponse(status: 503, headers: [("Retry-After", "Tue, 25 Nov 2025 17:10:00 GMT")]) },
            path: "/manifest.json")
        var device = downloader
        device.now = { Date(timeIntervalSince1970: 1_764_086_400) }  // 2025-11-25T16:00:00Z
        let error = await #expect(throws: UpdaterError.self) { try await device.fetchSmall(server.url("/manifest.json")) }
        #expect(error.flatMap { HTTPStatusFailure.found(in: $0) }?.retryAfter == .seconds(70 * 60))
    }

    @Test func staleETagGetsTheNewBody() async throws {
        let result = try await downloader.fetchSmall(server.url("/manifest.json"), ifNoneMatch: "\"old\"")
        #expect(result == .fetched(manifest, etag: result.etag) && result.etag != nil)
    }

    @Test func bodyOverTheCapIsRefusedFromItsContentLength() async throws {
        let url = server.url("/big.json")
        let error = await #expect(throws: UpdaterError.self) { try await downloader.fetchSmall(url) }
        #expect(error?.code == .tooLarge)
        #expect(error?.message == "GET \(url.absoluteString): body is larger than the limit of 65536 bytes")
        #expect(server.requests.count == 1 && sleeper.delays.isEmpty)
    }

    @Test func undeclaredBodyOverTheCapIsCutOff() async throws {
        faults.add(.noContentLength)
        let error = await #expect(throws: UpdaterError.self) { try await downloader.fetchSmall(server.url("/big.json")) }
        #expect(error?.code == .tooLarge)
        let exactlyCap = try await downloader.fetchSmall(server.url("/big.json"), cap: 70_000)
        #expect(exactlyCap.etag != nil)
    }

    @Test func gzipEncodedBombIsNeverDecoded() async throws {
        // 4 MiB of zeros gzip to about 4 KiB: under the cap on the wire, far over it decoded.
        // The transport never decodes: the compressed bytes arrive as they are (and would
        // fail the manifest's parse or signature), so no bomb can go off.
        let raw = try scratch.write("zeros", Data(count: 4 << 20))
        let gz = Process()
        gz.executableURL = URL(fileURLWithPath: "/bin/gzip")
        gz.arguments = ["-k", "-9", raw]
        try gz.runUnmasked()
        gz.waitUntilExit()
        let compressed = try Data(contentsOf: URL(fileURLWithPath: raw + ".gz"))
        #expect(compressed.count < 65536)
        let bomb = try LoopbackHTTPServer { _ in
            LoopbackResponse(status: 200, headers: [("Content-Encoding", "gzip")], body: .data(compressed))
        }
        defer { bomb.stop() }
        let result = try await downloader.fetchSmall(bomb.url("/manifest.json"))
        #expect(result == .fetched(compressed, etag: nil))
        #expect(bomb.requests.first?[header: "accept-encoding"] == "identity")
    }

    @Test func serverErrorRetriedThenFetched() async throws {
        faults.first(2, .status(502), path: "/manifest.json")
        let result = try await downloader.fetchSmall(server.url("/manifest.json"))
        #expect(result == .fetched(manifest, etag: result.etag))
        #expect(server.requests.count == 3 && sleeper.delays.count == 2)
    }

    @Test func clientErrorIsNotRetried() async throws {
        faults.add(.status(403))
        let error = await #expect(throws: UpdaterError.self) { try await downloader.fetchSmall(server.url("/manifest.json")) }
        #expect(error?.httpStatus == 403 && error?.kind == .dataError)
        #expect(server.requests.count == 1 && sleeper.delays.isEmpty)
    }

    @Test func unexpected304WithoutETagIsAnError() async throws {
        faults.add(.status(304))
        let error = await #expect(throws: UpdaterError.self) { try await downloader.fetchSmall(server.url("/manifest.json")) }
        #expect(error?.httpStatus == 304)
    }

    @Test func fileURLsWork() async throws {
        let result = try await downloader.fetchSmall(URL(fileURLWithPath: scratch.path + "/manifest.json"))
        #expect(result == .fetched(manifest, etag: nil))
        let error = await #expect(throws: UpdaterError.self) {
            try await downloader.fetchSmall(URL(fileURLWithPath: scratch.path + "/big.json"))
        }
        #expect(error?.code == .tooLarge)
    }

    @Test func refusedConnectionGivesUpAsNetworkError() async throws {
        let refusing = try LoopbackHTTPServer.refusingPort()
        let url = try #require(URL(string: "http://127.0.0.1:\(refusing.port)/manifest.json"))
        let d = Downloader(transport: DefaultTransport(), retry: RetryPolicy(maxAttempts: 3), sleeper: sleeper)
        let error = await #expect(throws: UpdaterError.self) { try await d.fetchSmall(url) }
        #expect(error?.message == "GET \(url.absoluteString): connection refused (gave up after 3 attempts)")
        #expect(error?.kind == .unavailable)
    }
}

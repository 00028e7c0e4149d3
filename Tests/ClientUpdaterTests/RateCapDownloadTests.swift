import ClientFoundation
import ClientUpdater
import ClientUpdaterHTTP
import Foundation
import TestSupport
import Testing

/// The download rate cap through the real transport against a real server on 127.0.0.1.
///
/// The limiter waits on a ``VirtualClock``: the transfer runs at full speed and the clock's
/// time adds up the waits the cap asked for, so "the cap was applied" is read from the
/// limiter's accounting (size / rate within 5 %) with no timed assertion.
@Suite struct RateCapDownloadTests {
    let scratch: FetchScratch
    let size = 4_000_000
    let payload: Data
    let faults = LoopbackFaults()
    let server: LoopbackHTTPServer
    let sleeper = RecordingSleeper()
    let clock = VirtualClock()
    let limiter: RateLimiter
    var downloader: Downloader

    init() throws {
        scratch = try FetchScratch()
        payload = fetchTestBytes(size, seed: 66)
        try scratch.write("www/app.tgz", payload)
        try scratch.write("www/manifest.json", fetchTestBytes(60_000, seed: 3))
        server = try LoopbackHTTPServer(handler: faults.wrap(LoopbackHTTPServer.folder(scratch.path + "/www")))
        limiter = RateLimiter(rate: ByteRate(bytesPerSecond: 1_000_000), clock: MonotonicClock(clock))
        downloader = Downloader(transport: DefaultTransport(), sleeper: sleeper, idleTimeout: .seconds(10))
        downloader.rateLimiter = limiter
    }

    var target: String { scratch.path + "/staging.part" }
    var sha256: String { Digest.hex(.sha256, of: payload) }

    /// The cap's time for `bytes` at 1 MB/s.
    func expectedTime(_ bytes: Int) -> Double { Double(bytes) / 1_000_000 }

    func expectWithinFivePercent(_ waited: Duration, of bytes: Int, _ comment: Comment? = nil) {
        let error = waited.inSeconds / expectedTime(bytes) - 1
        #expect(abs(error) <= 0.05, "waited \(waited) for \(bytes) bytes at 1 MB/s: error \(error) \(comment ?? "")")
    }

    @Test func anArchiveIsFetchedUnderTheCap() async throws {
        let result = try await downloader.download(server.url("/app.tgz"), to: target, expectedSize: Int64(size), expectedDigest: sha256)
        #expect(result.digest == sha256 && result.requests == 1)
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == payload)
        let accounting = limiter.accounting
        #expect(accounting.bytes == Int64(size), "every body byte went through the cap")
        expectWithinFivePercent(accounting.waited, of: size)
        #expect(clock.now.offset == accounting.waited, "the transfer waited exactly what the cap asked")
    }

    /// A connection cut mid-body is resumed with `Range` under the same limiter: the resume
    /// owes the debt of the cut request, and the bytes of both add up to the file once.
    @Test func anInterruptedDownloadResumesUnderTheSameCap() async throws {
        faults.add(.reset(afterBytes: 1_500_000), path: "/app.tgz", requests: 1...1)
        let result = try await downloader.download(server.url("/app.tgz"), to: target, expectedSize: Int64(size), expectedDigest: sha256)
        #expect(result.digest == sha256 && result.requests == 2)
        let log = try await server.settledLog()
        try #require(log.count == 2)
        let range = try #require(log[1].request[header: "range"])
        #expect(range.hasPrefix("bytes=") && range != "bytes=0-")
        #expect(sleeper.delays.count == 1, "one retry")
        let accounting = limiter.accounting
        #expect(accounting.bytes == Int64(size), "the bytes of the cut request and of the resume, each once")
        expectWithinFivePercent(accounting.waited, of: size, "over both requests")
    }

    /// A later check that finds a partial file takes only the rest, under the cap.
    @Test func aPartialFileFromAnEarlierRunResumesUnderTheCap() async throws {
        try scratch.write("staging.part", payload.prefix(1_000_000))
        let result = try await downloader.download(server.url("/app.tgz"), to: target, expectedSize: Int64(size), expectedDigest: sha256)
        #expect(result.resumedFrom == 1_000_000 && result.digest == sha256)
        #expect(limiter.accounting.bytes == Int64(size - 1_000_000))
        expectWithinFivePercent(limiter.accounting.waited, of: size - 1_000_000)
    }

    /// The manifest (and every small file: index, restriction, trust roots, cohort files)
    /// is never slowed: at 1 KiB/s its 60 kB would wait 43 s; it waits nothing.
    @Test func aManifestFetchIsNotSlowed() async throws {
        let slow = RateLimiter(rate: ByteRate(bytesPerSecond: 1024), clock: MonotonicClock(clock))
        var downloader = self.downloader
        downloader.rateLimiter = slow
        guard case .fetched(let body, _) = try await downloader.fetchSmall(server.url("/manifest.json"), cap: 64 * 1024) else {
            Issue.record("manifest not fetched")
            return
        }
        #expect(body.count == 60_000)
        #expect(slow.accounting == RateLimiter.Accounting(bytes: 0, waited: .zero))
        #expect(clock.now.offset == .zero)
    }

    /// `file:` URLs (and offline media, which copies through them) are local bytes: no cap.
    @Test func aFileURLIsNotCapped() async throws {
        let source = URL(fileURLWithPath: scratch.path + "/www/app.tgz")
        let result = try await downloader.download(source, to: target, expectedSize: Int64(size), expectedDigest: sha256)
        #expect(result.digest == sha256)
        #expect(limiter.accounting.bytes == 0)
    }

    @Test func withoutALimiterNothingWaits() async throws {
        var downloader = self.downloader
        downloader.rateLimiter = nil
        let result = try await downloader.download(server.url("/app.tgz"), to: target, expectedSize: Int64(size), expectedDigest: sha256)
        #expect(result.digest == sha256)
        #expect(limiter.accounting.bytes == 0 && clock.now.offset == .zero)
    }
}

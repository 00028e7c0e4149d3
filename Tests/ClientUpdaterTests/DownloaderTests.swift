import ClientFoundation
import ClientUpdater
import ClientUpdaterHTTP
import Foundation
import Synchronization
import TestSupport
import Testing

/// Records retry delays instead of sleeping; optionally acts on each sleep.
final class RecordingSleeper: Sleeper, Sendable {
    private let recorded = Mutex<[Duration]>([])
    private let action: (@Sendable (Int) throws -> Void)?
    init(action: (@Sendable (Int) throws -> Void)? = nil) { self.action = action }
    var delays: [Duration] { recorded.withLock { $0 } }
    func sleep(for duration: Duration) async throws {
        let n = recorded.withLock { recorded -> Int in
            recorded.append(duration)
            return recorded.count
        }
        try action?(n)
    }
}

/// `Downloader.download` against the real loopback server, one fault per test.
@Suite struct DownloaderTests {
    let scratch: FetchScratch
    let payload = fetchTestBytes(600_000, seed: 7)
    let faults = LoopbackFaults()
    let server: LoopbackHTTPServer
    let sleeper = RecordingSleeper()
    var downloader: Downloader

    init() throws {
        scratch = try FetchScratch()
        try scratch.write("www/app.tgz", payload)
        server = try LoopbackHTTPServer(handler: faults.wrap(LoopbackHTTPServer.folder(scratch.path + "/www")))
        // No false stall when the suite loads both cores.
        downloader = Downloader(transport: DefaultTransport(), sleeper: sleeper, idleTimeout: .seconds(10))
    }

    var url: URL { server.url("/app.tgz") }
    var target: String { scratch.path + "/staging.part" }
    var sha256: String { Digest.hex(.sha256, of: payload) }

    func sha256sum(_ path: String) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        p.arguments = [path]
        let out = Pipe()
        p.standardOutput = out
        try p.runUnmasked()
        let text = String(decoding: try out.fileHandleForReading.readAllRetryingInterrupts(), as: UTF8.self)
        p.waitUntilExit()
        return String(text.prefix(64))
    }

    func rangeStart(_ request: LoopbackRequest) -> Int? {
        guard let range = request[header: "range"], range.hasPrefix("bytes="), range.hasSuffix("-") else { return nil }
        return Int(range.dropFirst(6).dropLast())
    }

    @Test func hashEqualsSha256sumAndFileIsPrivate() async throws {
        let result = try await downloader.download(url, to: target, expectedSize: 600_000, expectedDigest: sha256.uppercased())
        #expect(result.size == 600_000 && result.requests == 1 && result.resumedFrom == 0)
        #expect(result.digest == (try sha256sum(target)))
        var st = stat()
        #expect(stat(target, &st) == 0 && st.st_mode & 0o777 == 0o600)
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == payload)
        let sha1 = try await downloader.download(url, to: target + "2", algorithm: .sha1)
        #expect(sha1.digest == Digest.hex(.sha1, of: payload))
    }

    @Test func resumesAfterResetMidBodyWithoutResendingBytes() async throws {
        faults.add(.reset(afterBytes: 200_000), path: "/app.tgz", requests: 1...1)
        let result = try await downloader.download(url, to: target, expectedSize: 600_000, expectedDigest: sha256)
        #expect(result.digest == sha256 && result.requests == 2)
        let log = try await server.settledLog()
        try #require(log.count == 2)
        #expect(log[0].request[header: "range"] == nil)
        let resumeAt = try #require(rangeStart(log[1].request), "second request carries Range: bytes=N-")
        #expect(resumeAt > 0 && resumeAt <= 200_000)
        #expect(log[1].status == 206)
        #expect(log[1].bodyBytesSent == Int64(600_000 - resumeAt), "only the missing bytes were sent again")
        #expect(sleeper.delays.count == 1)
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == payload)
    }

    @Test func resumesAPartialFileLeftByAnEarlierRun() async throws {
        try scratch.write("staging.part", payload.prefix(250_000))
        let result = try await downloader.download(url, to: target, expectedSize: 600_000, expectedDigest: sha256)
        #expect(result.resumedFrom == 250_000 && result.requests == 1 && result.digest == sha256)
        #expect(server.requests.first?[header: "range"] == "bytes=250000-")
        #expect(try await server.settledLog().first?.bodyBytesSent == 350_000)
    }

    @Test func completeFileOnDiskNeedsNoRequest() async throws {
        try scratch.write("staging.part", payload)
        let result = try await downloader.download(url, to: target, expectedSize: 600_000, expectedDigest: sha256)
        #expect(result.requests == 0 && result.resumedFrom == 600_000)
        #expect(server.requests.isEmpty)
    }

    @Test func corruptPartialIsDownloadedAgainFromZero() async throws {
        var bad = payload.prefix(100_000)
        bad[bad.startIndex + 10] ^= 0xff
        try scratch.write("staging.part", bad)
        let result = try await downloader.download(url, to: target, expectedSize: 600_000, expectedDigest: sha256)
        #expect(result.digest == sha256 && result.resumedFrom == 0)
        #expect(server.requests.map { $0[header: "range"] } == ["bytes=100000-", nil])
    }

    @Test func restartsCleanlyWhenServerIgnoresRange() async throws {
        let plain = try LoopbackHTTPServer { [payload] _ in LoopbackResponse(status: 200, body: .data(payload)) }
        defer { plain.stop() }
        try scratch.write("staging.part", payload.prefix(1000))
        let result = try await downloader.download(plain.url("/x"), to: target, expectedSize: 600_000, expectedDigest: sha256)
        #expect(result.digest == sha256 && result.resumedFrom == 0 && result.requests == 1)
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == payload)
    }

    @Test func truncatedBodyIsResumed() async throws {
        faults.add(.truncate(afterBytes: 123_456), path: "/app.tgz", requests: 1...1)
        let result = try await downloader.download(url, to: target, expectedSize: 600_000, expectedDigest: sha256)
        #expect(result.digest == sha256)
        #expect(server.requests.count == 2)
        // The resume starts where the file ends: at most the 123,456 bytes sent (bytes the
        // transport had read ahead but not yet handed over when the close came are fetched again).
        let start = try #require(rangeStart(server.requests[1]))
        #expect(start > 0 && start <= 123_456)
    }

    @Test func bodyLongerThanExpectedSizeIsStoppedAndNotRetried() async throws {
        faults.add(.appendBytes(Data(repeating: 0x41, count: 100_000)))
        let error = await #expect(throws: UpdaterError.self) {
            try await downloader.download(url, to: target, expectedSize: 600_000)
        }
        #expect(error?.code == .tooLarge)
        #expect(error?.message == "GET \(url.absoluteString): body exceeds the expected size of 600000 bytes")
        #expect(server.requests.count == 1 && sleeper.delays.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: target), "a too-large download is removed")
    }

    @Test func declaredLengthAboveExpectedSizeFailsBeforeTheBody() async throws {
        faults.add(.declaredLength(700_000))
        let error = await #expect(throws: UpdaterError.self) {
            try await downloader.download(url, to: target, expectedSize: 600_000)
        }
        #expect(error?.code == .tooLarge)
        #expect(server.requests.count == 1 && sleeper.delays.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: target))
    }

    @Test func undeclaredEndlessBodyStopsAtExpectedSize() async throws {
        faults.add(.noContentLength)
        faults.add(.appendBytes(Data(repeating: 0, count: 1_000_000)))
        let error = await #expect(throws: UpdaterError.self) {
            try await downloader.download(url, to: target, expectedSize: 600_000)
        }
        #expect(error?.code == .tooLarge)
        #expect(server.requests.count == 1)
        #expect(!FileManager.default.fileExists(atPath: target))
    }

    @Test func declaredLengthBelowExpectedSizeIsRejected() async throws {
        faults.add(.appendBytes(Data(repeating: 0x41, count: 10)))
        faults.add(.declaredLength(100))  // says 100 bytes, sends 600 010
        let error = await #expect(throws: UpdaterError.self) {
            try await downloader.download(url, to: target, expectedSize: 600_000)
        }
        #expect(error?.message == "GET \(url.absoluteString): the server's file is 100 bytes, expected 600000")
        #expect(server.requests.count == 1)
    }

    @Test func bytesBeyondTheDeclaredLengthAreNeverRead() async throws {
        faults.add(.appendBytes(Data(repeating: 0x41, count: 10)))
        faults.add(.declaredLength(600_000))  // the real file's length, then 10 stray bytes
        let result = try await downloader.download(url, to: target, expectedSize: 600_000, expectedDigest: sha256)
        #expect(result.size == 600_000 && result.digest == sha256)
    }

    @Test func serverErrorsAreRetriedWithBackoffThenSucceed() async throws {
        faults.add(.status(503), path: "/app.tgz", requests: 1...2)
        let result = try await downloader.download(url, to: target, expectedSize: 600_000, expectedDigest: sha256)
        #expect(result.requests == 3 && result.digest == sha256)
        let delays = sleeper.delays
        try #require(delays.count == 2)
        #expect(delays[0] >= .milliseconds(250) && delays[0] <= .milliseconds(500))
        #expect(delays[1] >= .milliseconds(500) && delays[1] <= .seconds(1))
    }

    @Test func notFoundIsNotRetried() async throws {
        let error = await #expect(throws: UpdaterError.self) {
            try await downloader.download(server.url("/missing.tgz"), to: target, expectedSize: 10)
        }
        #expect(error?.code == .httpStatus && error?.httpStatus == 404)
        #expect(error?.message == "GET \(server.url("/missing.tgz").absoluteString): HTTP 404")
        #expect(server.requests.count == 1 && sleeper.delays.isEmpty)
    }

    @Test func persistentFailureGivesUpAfterMaxAttempts() async throws {
        faults.add(.status(500))
        var d = downloader
        d.retry = RetryPolicy(maxAttempts: 3, initialDelay: .seconds(1), maxDelay: .milliseconds(1500))
        let error = await #expect(throws: UpdaterError.self) { try await d.download(url, to: target) }
        #expect(error?.message == "GET \(url.absoluteString): HTTP 500 (gave up after 3 attempts)")
        #expect(error?.kind == .dataError || error?.kind == .unavailable)
        #expect(server.requests.count == 3)
        #expect(sleeper.delays.allSatisfy { $0 <= .milliseconds(1500) })
    }

    @Test func refusedThenRecovers() async throws {
        let port = server.port
        server.stop()
        let server = self.server
        let sleeper = RecordingSleeper { n in if n == 2 { try server.start() } }
        let d = Downloader(transport: DefaultTransport(), sleeper: sleeper, idleTimeout: .seconds(10))
        let result = try await d.download(server.url("/app.tgz"), to: target, expectedSize: 600_000, expectedDigest: sha256)
        #expect(result.digest == sha256 && result.requests == 3)
        #expect(server.port == port && server.requests.count == 1)
    }

    @Test func droppedConnectionsThenRecover() async throws {
        server.dropConnections(2)
        let result = try await downloader.download(url, to: target, expectedSize: 600_000, expectedDigest: sha256)
        #expect(result.digest == sha256 && result.requests == 3)
        #expect(server.connectionsAccepted == 3 && server.requests.count == 1)
    }

    @Test func slowDripWithinIdleTimeoutSucceeds() async throws {
        faults.add(.drip(bytes: 100_000, every: 0.05))
        let result = try await downloader.download(url, to: target, expectedSize: 600_000, expectedDigest: sha256)
        #expect(result.requests == 1 && result.digest == sha256)
    }

    @Test func dripSlowerThanIdleTimeoutTimesOutAndResumes() async throws {
        // Gaps of 8 s against an idle timeout of 2 s: a starved process counts at most 1 s
        // a tick (StallWatch), so a loaded CI machine needs the wide margin to see the stall;
        // a machine that sees it at once still ends this test 2 s into the first gap.
        faults.add(.drip(bytes: 100_000, every: 8.0), path: "/app.tgz", requests: 1...1)
        var d = downloader
        d.idleTimeout = .seconds(2)
        let result = try await d.download(url, to: target, expectedSize: 600_000, expectedDigest: sha256)
        #expect(result.digest == sha256)
        try #require(server.requests.count >= 2, "the stall was noticed: \(server.log)")
        // Resumed from what had arrived: after the first drip, or later when a loaded machine
        // kept the watch from running during the first gaps, up to the whole body whose end
        // had not yet been seen (never from the start).
        let start = rangeStart(server.requests[1]) ?? 0
        #expect(start >= 100_000 && start <= 600_000, "resumed after the first drip: \(server.log)")
    }

    @Test func stallPastIdleTimeoutFailsAsTimeout() async throws {
        faults.add(.stall(afterBytes: 1000))
        var d = downloader
        d.idleTimeout = .milliseconds(200)
        d.retry = RetryPolicy(maxAttempts: 2)
        let error = await #expect(throws: UpdaterError.self) { try await d.download(url, to: target, expectedSize: 600_000) }
        #expect(error?.code == .network && error?.kind == .unavailable)
        #expect(error?.message == "GET \(url.absoluteString): timed out (no data for 0.2 s) (gave up after 2 attempts)")
        #expect(FileManager.default.fileExists(atPath: target), "kept for a later resume")
    }

    @Test func hashMismatchIsPermanentAndRemovesTheFile() async throws {
        let wrong = String(repeating: "0", count: 64)
        let error = await #expect(throws: UpdaterError.self) {
            try await downloader.download(url, to: target, expectedSize: 600_000, expectedDigest: wrong)
        }
        #expect(error?.code == .hashMismatch)
        #expect(error?.message.contains("SHA-256 of the 600000 bytes downloaded is \(sha256), expected \(wrong)") == true)
        #expect(server.requests.count == 1 && sleeper.delays.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: target))
    }

    @Test func reportsTheServersETag() async throws {
        faults.add(.etag("\"not-the-hash\""))
        let result = try await downloader.download(url, to: target)
        #expect(result.etag == "\"not-the-hash\"")
    }

    @Test func fileURLsDownloadAndResume() async throws {
        let source = URL(fileURLWithPath: scratch.path + "/www/app.tgz")
        try scratch.write("staging.part", payload.prefix(5000))
        let result = try await downloader.download(source, to: target, expectedSize: 600_000, expectedDigest: sha256)
        #expect(result.resumedFrom == 5000 && result.digest == sha256)
        let error = await #expect(throws: UpdaterError.self) {
            try await downloader.download(URL(fileURLWithPath: scratch.path + "/none"), to: target + "x")
        }
        #expect(error?.httpStatus == 404)
    }

    @Test func refusesToWriteThroughASymlink() async throws {
        try scratch.write("elsewhere", Data())
        try FileManager.default.createSymbolicLink(atPath: target, withDestinationPath: scratch.path + "/elsewhere")
        let error = await #expect(throws: UpdaterError.self) { try await downloader.download(url, to: target) }
        #expect(error?.code == .io)
        #expect(server.requests.isEmpty)
    }

    @Test func backoffIsCappedAndJittered() {
        let policy = RetryPolicy(maxAttempts: 10, initialDelay: .milliseconds(500), maxDelay: .seconds(8), multiplier: 2, jitter: 0.5)
        #expect(policy.delay(beforeRetry: 1, random: 0) == .milliseconds(500))
        #expect(policy.delay(beforeRetry: 4, random: 0) == .seconds(4))
        #expect(policy.delay(beforeRetry: 9, random: 0) == .seconds(8))
        #expect(policy.delay(beforeRetry: 9, random: 0.999) > .seconds(4))
        #expect(policy.delay(beforeRetry: 2, random: 0.5) == .milliseconds(750))
        #expect(policy.delay(beforeRetry: 5_000, random: 0) == .seconds(8), "no overflow far past the cap")
    }

    @Test func partialLongerThanTheFileRestartsFromZeroAfter416() async throws {
        try scratch.write("staging.part", payload + Data(repeating: 1, count: 100))
        let result = try await downloader.download(url, to: target, expectedDigest: sha256)
        #expect(result.digest == sha256 && result.size == 600_000 && result.resumedFrom == 0)
        #expect(try await server.settledLog().map(\.status) == [416, 200])
        #expect(server.requests.map { $0[header: "range"] } == ["bytes=600100-", nil])
    }

    @Test func reportsProgressUpToTheFullSize() async throws {
        let seen = BodyCollector()
        let result = try await downloader.download(url, to: target, expectedSize: 600_000) { bytes in
            withUnsafeBytes(of: bytes) { seen.append($0) }
        }
        let values = seen.data.withUnsafeBytes { Array($0.bindMemory(to: Int64.self)) }
        #expect(values.last == result.size)
        #expect(values == values.sorted())
    }

    @Test func serverFileSmallerThanExpectedIsRejectedWithoutRetry() async throws {
        let error = await #expect(throws: UpdaterError.self) {
            try await downloader.download(url, to: target, expectedSize: 700_000)
        }
        #expect(error?.code == .rejected)
        #expect(error?.message == "GET \(url.absoluteString): the server's file is 600000 bytes, expected 700000")
        #expect(server.requests.count == 1 && sleeper.delays.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: target))
    }
}

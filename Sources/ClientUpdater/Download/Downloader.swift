import ClientFoundation
import Foundation
import Synchronization

/// Download policy on top of a ``Transport``: files streamed to disk with a digest,
/// resume with `Range`, retries with capped backoff, caps; small capped bodies with
/// conditional GET (``fetchSmall(_:cap:ifNoneMatch:)``).
///
/// Transient failures (refused, reset, timed out, DNS, truncated body, 5xx/408/429) are
/// retried per ``retry``; permanent ones (other statuses, too large, hash mismatch) are
/// thrown at once. After the last attempt the error says how many attempts were made.
///
/// The transport's own errors are read through ``TransportFailing`` and leave the
/// downloader as ``UpdaterError`` (``get(_:head:sink:)``): a caller sees one error type
/// whatever transport it was given.
package struct Downloader: Sendable {
    package var transport: any Transport
    package var retry: RetryPolicy
    package var sleeper: any Sleeper
    /// Give up on a request when no byte arrives for this long.
    package var idleTimeout: Duration
    /// Give up on one request (connect, head and body) after this long; `nil` for no
    /// limit. A request cut by it is retried like any transient failure.
    package var timeLimit: Duration?
    /// Extra request headers sent with every request.
    package var headers: [String: String]
    /// Called before each retry with the attempt that failed (1-based), the delay and
    /// the error: for logging.
    package var onRetry: (@Sendable (Int, Duration, any TransportFailing) -> Void)?
    /// The device's rate cap (its `downloadRate`), carried by the requests of
    /// ``download(_:to:expectedSize:expectedDigest:algorithm:progress:)`` (release payloads:
    /// archives, patches, file lists), their retries and their `Range` resumes, and never by
    /// ``fetchSmall(_:cap:ifNoneMatch:)`` (manifests, indexes, restrictions, trust roots,
    /// cohort files). One limiter for every download of this downloader: parallel downloads
    /// share the cap. `nil`: no cap.
    package var rateLimiter: RateLimiter?
    /// The device's wall clock, against which a `Retry-After` given as an HTTP date is read
    /// (the engine gives its own, `DeviceEngine.Options.now`).
    package var now: @Sendable () -> Date = { Date() }

    /// - Parameter transport: the network seam; `ClientUpdaterHTTP` adds an initializer
    ///   without it that uses its `DefaultTransport`.
    package init(
        transport: any Transport, retry: RetryPolicy = .standard,
        sleeper: any Sleeper = TaskSleeper(), idleTimeout: Duration = .seconds(30), headers: [String: String] = [:]
    ) {
        self.transport = transport
        self.retry = retry
        self.sleeper = sleeper
        self.idleTimeout = idleTimeout
        self.headers = headers
    }

    /// What ``download(_:to:expectedSize:expectedDigest:algorithm:progress:)`` produced.
    package struct Result: Sendable, Equatable {
        /// Bytes in the file.
        package var size: Int64
        /// Lowercase hex digest of the whole file.
        package var digest: String
        /// The server's `ETag` for the last response, if any.
        package var etag: String?
        /// Bytes that were already on disk (from an earlier run) and were kept.
        package var resumedFrom: Int64
        /// Requests made (0 when the file was already complete on disk).
        package var requests: Int
    }

    /// Downloads `url` into the file at `path`, hashing while writing, and fsyncs it.
    ///
    /// - The file is created `O_CREAT|O_EXCL` with mode 0600. If it exists (an interrupted
    ///   download), its bytes are re-hashed and only the rest is requested with
    ///   `Range: bytes=N-`; a 206 is appended, a 200 (server ignores ranges) restarts
    ///   cleanly from byte 0, a 416 or a 206 at the wrong offset restarts from 0.
    /// - `expectedSize`: the transfer stops as soon as the body would exceed it
    ///   (`.tooLarge`, naming the URL and the size); a body that ends short is a
    ///   truncation and is resumed.
    /// - `expectedDigest` (hex, case-insensitive): a mismatch is `.hashMismatch`; when some
    ///   bytes came from a resume, the file is downloaded once more from zero first.
    /// - A server whose file is declared smaller than `expectedSize` is `.rejected` at once.
    /// - On `.tooLarge`, `.hashMismatch` or `.rejected` the file is removed, and on a full
    ///   disk (`ENOSPC`, thrown as `.noSpace`); on other failures (network, status) it is
    ///   kept so a later call resumes it.
    package func download(
        _ url: URL, to path: String, expectedSize: Int64? = nil, expectedDigest: String? = nil,
        algorithm: Digest.Algorithm = .sha256, progress: (@Sendable (Int64) -> Void)? = nil
    ) async throws -> Result {
        try await download(
            url, to: path, expectedSize: expectedSize, expectedDigest: expectedDigest, algorithm: algorithm,
            progress: progress, verified: { _ in () }
        ).0
    }

    /// Like ``download(_:to:expectedSize:expectedDigest:algorithm:progress:)``, then hands
    /// the downloaded file's own descriptor (at byte 0) to `verified` once size and digest
    /// matched: the bytes that were checked are the bytes the caller reads, with no
    /// re-open by path in between. Opening (and re-hashing a resumed file), syncing and
    /// `verified` run on the ``BlockingExecutor``, never on the cooperative pool.
    package func download<T: Sendable>(
        _ url: URL, to path: String, expectedSize: Int64?, expectedDigest: String?,
        algorithm: Digest.Algorithm = .sha256, progress: (@Sendable (Int64) -> Void)? = nil,
        verified: @escaping @Sendable (Int32) throws -> T
    ) async throws -> (Result, T) {
        rateLimiter?.refresh()  // a cap changed while the device runs applies from this download
        let file = try await BlockingExecutor.run { try DownloadFile(path: path, algorithm: algorithm) }
        let result: Result
        do {
            result = try await download(url, into: file, expectedSize: expectedSize, expectedDigest: expectedDigest, progress: progress)
        } catch let error as UpdaterError where error.code == .tooLarge || error.code == .hashMismatch || error.code == .rejected {
            file.remove()
            // Bytes of a site mirror that did not verify: dropped, and the file is asked again
            // from the next source (the mirror is skipped for the rest of the check).
            if let mirrors = transport as? MirrorTransport, mirrors.distrust(url) {
                return try await download(
                    url, to: path, expectedSize: expectedSize, expectedDigest: expectedDigest, algorithm: algorithm, progress: progress,
                    verified: verified)
            }
            throw error
        } catch let error where DiskSpace.isNoSpace(error) {
            // Kept, it would hold the disk full and every later check would resume into it.
            let kept = file.size
            file.remove()
            throw UpdaterError(
                .noSpace,
                "GET \(url.absoluteString): the disk filled up after \(kept) bytes (\(error)); the partial download was removed, not kept to resume",
                underlying: POSIXErrorBox(code: ENOSPC))
        }
        return (result, try await BlockingExecutor.run { try file.withDescriptorAtStart(verified) })
    }

    private func download(
        _ url: URL, into file: DownloadFile, expectedSize: Int64?, expectedDigest: String?,
        progress: (@Sendable (Int64) -> Void)?
    ) async throws -> Result {
        if let expectedSize, file.size > expectedSize { try file.reset() }
        var requests = 0
        var etag: String?
        for pass in 0..<2 {
            if expectedSize == nil || file.size < expectedSize ?? 0 {
                try await retrying { _ in
                    requests += 1
                    etag = try await fetchRest(url, into: file, expectedSize: expectedSize, progress: progress) ?? etag
                }
            }
            let digest = try await BlockingExecutor.run {
                try file.sync()
                return file.finishDigest()
            }
            if let expectedDigest, digest != expectedDigest.lowercased() {
                if file.resumed && pass == 0 {
                    // The bytes kept from before may be the bad ones: none of them count as a
                    // mirror's, and a mirror that served some is not asked again in this check.
                    (transport as? MirrorTransport)?.discard(url)
                    try file.reset()
                    continue
                }
                throw UpdaterError(
                    .hashMismatch,
                    "GET \(url.absoluteString): \(Self.name(file.algorithm)) of the \(file.size) bytes downloaded is \(digest), expected \(expectedDigest.lowercased())"
                )
            }
            return Result(size: file.size, digest: digest, etag: etag, resumedFrom: file.keptFromEarlier, requests: requests)
        }
        throw UpdaterError(.internalError, "GET \(url.absoluteString): download did not converge")
    }

    /// One request for the bytes not yet on disk. Returns the response's ETag.
    private func fetchRest(
        _ url: URL, into file: DownloadFile, expectedSize: Int64?, progress: (@Sendable (Int64) -> Void)?
    ) async throws -> String? {
        for _ in 0..<2 {
            let offset = file.size
            var headers = self.headers
            if offset > 0 { headers["Range"] = "bytes=\(offset)-" }
            do {
                let response = try await get(
                    TransportRequest(url: url, headers: headers, idleTimeout: idleTimeout, timeLimit: timeLimit, rateLimiter: rateLimiter),
                    head: { head in try Self.begin(head, url: url, file: file, offset: offset, expectedSize: expectedSize) },
                    sink: { chunk in
                        if let expectedSize, file.size + Int64(chunk.count) > expectedSize {
                            throw Self.tooLarge(url, expectedSize)
                        }
                        try file.append(chunk)
                        try FaultPoint.hit("download.chunk") { UpdaterError.io("cannot write", path: file.path, errno: $0) }
                        progress?(file.size)
                    })
                if let expectedSize, file.size < expectedSize {
                    throw UpdaterError.network(url, .truncated(received: file.size, expected: expectedSize))
                }
                return response[header: "etag"]
            } catch is RestartFromZero {
                try file.reset()
            }
        }
        throw UpdaterError(.rejected, "GET \(url.absoluteString): the server does not answer range requests consistently")
    }

    /// Judges the response head before any body byte is written.
    private static func begin(_ head: TransportResponse, url: URL, file: DownloadFile, offset: Int64, expectedSize: Int64?) throws {
        switch head.status {
        case 206:
            guard let range = head[header: "content-range"].flatMap(ContentRange.init), range.start == offset else {
                throw RestartFromZero()
            }
            if let expectedSize, let total = range.total { try checkTotal(total, url: url, expectedSize: expectedSize) }
            file.markResumed()
        case 200...299:
            if offset > 0 { try file.reset() }  // Range ignored: start over cleanly
            if let expectedSize, let length = head[header: "content-length"].flatMap({ Int64($0) }) {
                try checkTotal(length, url: url, expectedSize: expectedSize)
            }
        case 416 where offset > 0:
            throw RestartFromZero()
        default:
            throw UpdaterError.httpStatus(url, head.status, (300...399).contains(head.status) ? "redirects are not followed" : nil)
        }
    }

    /// A complete resource of the wrong size can never match: fail before its body.
    private static func checkTotal(_ total: Int64, url: URL, expectedSize: Int64) throws {
        if total > expectedSize { throw tooLarge(url, expectedSize) }
        if total < expectedSize {
            throw UpdaterError(.rejected, "GET \(url.absoluteString): the server's file is \(total) bytes, expected \(expectedSize)")
        }
    }

    static func tooLarge(_ url: URL, _ size: Int64) -> UpdaterError {
        UpdaterError(.tooLarge, "GET \(url.absoluteString): body exceeds the expected size of \(size) bytes")
    }

    static func name(_ algorithm: Digest.Algorithm) -> String { algorithm == .sha1 ? "SHA-1" : "SHA-256" }

    /// Performs `request` on ``transport``, saying the transport's own failures
    /// (``TransportFailing``) as ``UpdaterError`` `.network` or `.httpStatus` with their
    /// message; what `head` or `sink` throw is rethrown as it is.
    package func get(
        _ request: TransportRequest,
        head: @Sendable (TransportResponse) throws -> Void,
        sink: @Sendable (UnsafeRawBufferPointer) throws -> Void
    ) async throws -> TransportResponse {
        let caller = CallerThrew()
        do {
            return try await transport.get(
                request,
                head: { response in
                    do { try head(response) } catch {
                        caller.set()
                        throw error
                    }
                },
                sink: { chunk in
                    do { try sink(chunk) } catch {
                        caller.set()
                        throw error
                    }
                })
        } catch let error where !caller.isSet || (error as? any TransportFailing)?.transportFailure != nil {
            // A failure below HTTP is the transport's even when `head` or `sink` threw too.
            throw UpdaterError.saying(error)
        }
    }

    /// The one retry loop of the device: runs `operation` (given the 1-based attempt) until
    /// it succeeds or fails permanently; a transient failure (``TransportFailing``: network,
    /// 5xx, 408, 429, whichever module's error says it) is retried after ``retry``'s backoff
    /// (reported to ``onRetry``) until the attempts run out, then `exhausted` turns the last
    /// error and the number of attempts into what is thrown.
    package func retrying<T>(
        _ operation: (Int) async throws -> T,
        exhausted: (any TransportFailing, Int) -> any Error = Downloader.gaveUp
    ) async throws -> T {
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await operation(attempt)
            } catch let error as any TransportFailing where error.isTransient {
                guard attempt < retry.maxAttempts else { throw exhausted(error, attempt) }
                var delay = retry.delay(beforeRetry: attempt, random: Double.random(in: 0..<1))
                // A server that said when to come back (`Retry-After`) is not asked sooner; one
                // that asks for longer than this policy ever waits is left to the next check.
                if let asked = error.statusFailure?.retryAfter {
                    guard asked <= retry.maxDelay else { throw exhausted(error, attempt) }
                    delay = max(delay, asked)
                }
                onRetry?(attempt, delay, error)
                try await sleeper.sleep(for: delay)
            }
        }
    }

    /// The last transient error as an ``UpdaterError``, saying how many attempts were made
    /// (when more than one).
    package static func gaveUp(_ error: any TransportFailing, after attempts: Int) -> any Error {
        let said = UpdaterError.saying(error)
        guard attempts > 1, let error = said as? UpdaterError else { return said }
        return UpdaterError(error.code, "\(error.message) (gave up after \(attempts) attempts)", underlying: error.underlying)
    }
}

/// Thrown by a response head to make the downloader start again from byte 0.
struct RestartFromZero: Error {}

/// Set when the caller's `head` or `sink` threw, so ``Downloader/get(_:head:sink:)`` tells
/// the caller's own error from the transport's.
final class CallerThrew: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}

/// A parsed `Content-Range: bytes a-b/total` (total may be `*`).
struct ContentRange: Equatable {
    var start: Int64
    var end: Int64
    var total: Int64?

    init?(_ text: String) {
        guard text.hasPrefix("bytes ") else { return nil }
        let parts = text.dropFirst(6).split(separator: "/", maxSplits: 1)
        guard parts.count == 2 else { return nil }
        let bounds = parts[0].split(separator: "-", maxSplits: 1)
        guard bounds.count == 2, let a = Int64(bounds[0]), let b = Int64(bounds[1]), a <= b else { return nil }
        start = a
        end = b
        total = parts[1] == "*" ? nil : Int64(parts[1])
    }
}

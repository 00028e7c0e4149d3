import Foundation
import Synchronization

extension Downloader {
    /// What ``fetchSmall(_:cap:ifNoneMatch:)`` got.
    package enum SmallFetch: Sendable, Equatable {
        /// 304: the resource still has the given ETag; nothing to parse.
        case notModified(etag: String?)
        /// 2xx: the whole body (at most `cap` bytes) and the server's ETag.
        case fetched(Data, etag: String?)

        /// The ETag of either case.
        package var etag: String? {
            switch self {
            case .notModified(let etag), .fetched(_, let etag): return etag
            }
        }
    }

    /// Fetches a small resource (a manifest) into memory, with retries.
    ///
    /// At most `cap` bytes are ever kept: a declared `Content-Length` above it fails before
    /// the body is read, and a body growing past it is cut off (`.tooLarge`). The cap
    /// applies to decoded bytes, so a gzip-encoded body cannot expand past it either.
    /// With `ifNoneMatch` (a stored ETag) a 304 answer returns ``SmallFetch/notModified(etag:)``.
    /// Any status other than 2xx or 304 throws `.httpStatus` (5xx after retries).
    package func fetchSmall(_ url: URL, cap: Int = 64 * 1024, ifNoneMatch etag: String? = nil) async throws -> SmallFetch {
        try await retrying { _ in
            var headers = self.headers
            if let etag { headers["If-None-Match"] = etag }
            let body = SmallBody(cap: cap)
            let response = try await get(
                TransportRequest(url: url, headers: headers, idleTimeout: idleTimeout, timeLimit: timeLimit),
                head: { head in
                    switch head.status {
                    case 304 where etag != nil:
                        return
                    case 200...299 where head.status != 206:
                        if let length = head[header: "content-length"].flatMap({ Int64($0) }), length > Int64(cap) {
                            throw Self.overCap(url, cap)
                        }
                    default:
                        throw UpdaterError.httpStatus(
                            url, head.status, (300...399).contains(head.status) ? "redirects are not followed" : nil,
                            retryAfter: head[header: "retry-after"].flatMap { RetryAfter.parse($0, now: now()) })
                    }
                },
                sink: { chunk in
                    guard body.append(chunk) else { throw Self.overCap(url, cap) }
                })
            if response.status == 304 { return .notModified(etag: response[header: "etag"] ?? etag) }
            return .fetched(body.data, etag: response[header: "etag"])
        }
    }

    static func overCap(_ url: URL, _ cap: Int) -> UpdaterError {
        UpdaterError(.tooLarge, "GET \(url.absoluteString): body is larger than the limit of \(cap) bytes")
    }
}

/// A capped in-memory body.
final class SmallBody: Sendable {
    // A transport calls the sink serially; `data` is read after `get`.
    private let storage = Mutex(Data())
    let cap: Int
    init(cap: Int) { self.cap = cap }

    /// The bytes appended so far.
    var data: Data { storage.withLock { $0 } }

    /// Appends a chunk; false (and nothing kept) when it would exceed the cap.
    func append(_ chunk: UnsafeRawBufferPointer) -> Bool {
        storage.withLock { data in
            guard data.count + chunk.count <= cap else { return false }
            data.append(contentsOf: chunk)
            return true
        }
    }
}

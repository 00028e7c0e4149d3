import AsyncHTTPClient
import ClientFoundation
import Foundation
import NIOCore

/// Reading an answer's body with a cap: what a store sends past the cap is never read, so
/// a hostile or broken store (a 300 MiB `manifest.json`) costs at most the cap in memory.
extension S3Client {
    /// What to do with a body.
    enum BodyRead: Sendable {
        /// Keep at most this many bytes.
        case keep(Int)
        /// Hash at most this many bytes, keeping none.
        case hash(Int64)

        var limit: Int64 {
            switch self {
            case .keep(let n): return Int64(n)
            case .hash(let n): return n
            }
        }
    }

    /// A body read up to its cap.
    struct Received {
        /// The bytes kept (`.keep`): all of them, or the first `limit` when `complete` is false.
        var data = Data()
        /// The body's SHA-256 (`.hash`), when it was read to its end within the cap.
        var sha256: String?
        /// False when the body declared or sent more than the cap.
        var complete = true
    }

    /// Reads `body` until its end or until more than the cap has arrived, whichever comes
    /// first. A `Content-Length` past the cap is refused before reading anything. Leaving the
    /// loop early drops the body, which makes AsyncHTTPClient close the connection: the
    /// rest of the body is never received.
    static func receive(_ body: HTTPClientResponse.Body, declared: Int64?, read: BodyRead) async throws -> Received {
        var received = Received()
        let limit = read.limit
        if let declared, declared > limit {
            received.complete = false
            return received
        }
        var digest: Digest?
        if case .hash = read { digest = Digest(.sha256) }
        var count: Int64 = 0
        for try await chunk in body {
            let room = Int(max(0, limit - count))
            count += Int64(chunk.readableBytes)
            chunk.withUnsafeReadableBytes { bytes in
                let kept = UnsafeRawBufferPointer(rebasing: bytes.prefix(room))
                if let digest { digest.update(kept) } else { received.data.append(contentsOf: kept) }
            }
            if count > limit {
                received.complete = false
                return received
            }
        }
        received.sha256 = digest?.finalizeHex()
        return received
    }
}

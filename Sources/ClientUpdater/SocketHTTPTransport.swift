import Foundation

/// A small HTTP/1.1 client on POSIX sockets for plain `http:` URLs (loopback, LAN,
/// a local mirror). `file:` URLs are read from disk; `https:` is not handled here (see
/// ``DefaultTransport``).
///
/// Why it exists: FoundationNetworking's `URLSession` on Linux hands every received chunk
/// to its delegate queue asynchronously and cannot pause libcurl, so a consumer slower
/// than the network (hashing, a slow disk) makes memory grow with the download. Here the
/// socket is read only after the sink returned: memory stays flat (one 256 KiB buffer)
/// and TCP flow control slows the server down. See BENCHMARKS.md, "Transport".
///
/// - One connection per request (`Connection: close`); each transfer runs on its own
///   thread, so blocking reads never occupy the Swift concurrency pool.
/// - Bodies framed by `Content-Length`, `Transfer-Encoding: chunked`, or connection
///   close; a body ending before its declared length is ``TransportFailure/truncated(received:expected:)``.
/// - `Accept-Encoding: identity` is sent and nothing is ever decoded: a server that
///   compresses anyway delivers the compressed bytes, which then fail the caller's
///   parse or hash check (no decompression bomb is possible).
/// - Redirects are not followed; cancellation of the calling task closes the socket.
public struct SocketHTTPTransport: HeadFirstTransport {
    /// Bytes read from the socket per system call (and the largest chunk handed to a sink).
    public var bufferSize: Int

    public init(bufferSize: Int = 256 * 1024) {
        self.bufferSize = max(4096, bufferSize)
    }

    public func get(
        _ request: TransportRequest,
        head: @Sendable (TransportResponse) throws -> Void,
        sink: @Sendable (UnsafeRawBufferPointer) throws -> Void
    ) async throws -> TransportResponse {
        switch request.url.scheme?.lowercased() {
        case "file":
            return try FileTransport.get(request, head: head, sink: sink)
        case "http":
            break
        default:
            throw UpdaterError(.unsupported, "GET \(request.url.absoluteString): unsupported URL scheme for the socket transport (use http: or file:)")
        }
        let exchange = SocketHTTPExchange(request: request, bufferSize: bufferSize)
        return try await withoutActuallyEscaping(head) { head in
            try await withoutActuallyEscaping(sink) { sink in
                try await withTaskCancellationHandler {
                    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<TransportResponse, any Error>) in
                        // The thread captures only the exchange: it drops head and sink
                        // before resuming us, so they never outlive this call.
                        exchange.prepare(head: head, sink: sink, continuation: continuation)
                        let thread = Thread { exchange.runAndResume() }
                        thread.name = "SocketHTTPTransport"
                        thread.start()
                    }
                } onCancel: {
                    exchange.cancel()
                }
            }
        }
    }
}

/// The production ``Transport``: ``SocketHTTPTransport`` for `http:` and `file:`,
/// ``URLSessionTransport`` (libcurl, with TLS) for `https:`.
public final class DefaultTransport: HeadFirstTransport, @unchecked Sendable {
    // @unchecked Sendable: `secureSession` is created once under `lock`; the rest is immutable.
    private let plain = SocketHTTPTransport()
    private let maxConnectionsPerHost: Int
    private let lock = NSLock()
    private var secureSession: URLSessionTransport?

    /// - Parameter maxConnectionsPerHost: parallel HTTPS connections to one host.
    public init(maxConnectionsPerHost: Int = 6) {
        self.maxConnectionsPerHost = maxConnectionsPerHost
    }

    /// The URLSession side, created on first `https:` use (plain and `file:` use never pay for it).
    private var secure: URLSessionTransport {
        lock.withLock {
            if let secureSession { return secureSession }
            let made = URLSessionTransport(maxConnectionsPerHost: maxConnectionsPerHost)
            secureSession = made
            return made
        }
    }

    public func get(
        _ request: TransportRequest,
        head: @Sendable (TransportResponse) throws -> Void,
        sink: @Sendable (UnsafeRawBufferPointer) throws -> Void
    ) async throws -> TransportResponse {
        if request.url.scheme?.lowercased() == "https" {
            return try await secure.get(request, head: head, sink: sink)
        }
        return try await plain.get(request, head: head, sink: sink)
    }
}

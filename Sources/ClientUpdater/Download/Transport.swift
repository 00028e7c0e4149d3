import Foundation
import Synchronization

/// The network seam: the host owns the connection, the core owns the logic.
///
/// Implementations only move bytes. Size caps, hashing, retries and policy live in the
/// core, so a test or another platform can plug in its own transport.
///
/// A transport fails with its own module's error; the core reads it through
/// ``TransportFailing`` (ClientUpdaterHTTP's `HTTPTransportError` is one), and the
/// `Downloader` says it as ``UpdaterError`` to its callers.
public protocol Transport: Sendable {
    /// Performs a GET and streams the body to `sink` chunk by chunk, as it arrives.
    ///
    /// - Parameters:
    ///   - request: URL and headers (e.g. `If-None-Match`, `Range`).
    ///   - sink: called with each body chunk, serially (never two chunks at once), and
    ///     never after `get` returns; throwing from it aborts the transfer (used to stop
    ///     a body that grows past its cap) and `get` rethrows that error.
    /// - Returns: the response head, once the body has been fully delivered.
    /// - Throws: for connection failures, truncated bodies and timeouts, the transport's
    ///   ``TransportFailing`` error with a ``TransportFailure`` (its `.network` code, the
    ///   failure as the underlying cause; the message as `ModuleError.network(_:_:)` words
    ///   it). An HTTP error status is *returned*, not thrown: the caller judges it. What
    ///   `sink` throws is rethrown as it is.
    func get(_ request: TransportRequest, sink: @Sendable (UnsafeRawBufferPointer) throws -> Void) async throws -> TransportResponse

    /// Like ``get(_:sink:)``, but hands the response head to `head` as soon as it arrives,
    /// before the first body chunk (for every status, errors included). Throwing from
    /// `head` aborts the transfer without reading the body; `get` rethrows that error.
    ///
    /// The updater's downloader uses this to judge a status or a `Content-Range` before writing
    /// a byte. Production transports implement it; the default implementation, meant for
    /// in-memory test doubles, collects the body of ``get(_:sink:)`` in memory first.
    func get(
        _ request: TransportRequest,
        head: @Sendable (TransportResponse) throws -> Void,
        sink: @Sendable (UnsafeRawBufferPointer) throws -> Void
    ) async throws -> TransportResponse

    /// Sends one small request with a body (a fleet-report batch's `POST`) and reads its
    /// answer, at most ``TransportExchange/maxResponseBytes`` of it (a longer body is cut
    /// there: `TransportReply/truncated`). No redirect is followed: a 3xx is returned.
    ///
    /// The same connection setup as ``get(_:sink:)`` (proxies, trust store, timeouts).
    /// The default implementation, for transports that fetch only, throws
    /// ``UpdaterError`` `.unsupported`.
    /// - Throws: the transport's ``TransportFailing`` error with a ``TransportFailure`` for
    ///   connection failures and timeouts, its own error for a URL scheme it cannot send to;
    ///   an HTTP error status is *returned*.
    func exchange(_ request: TransportExchange) async throws -> TransportReply
}

extension Transport {
    /// Default: this transport only fetches.
    public func exchange(_ request: TransportExchange) async throws -> TransportReply {
        throw UpdaterError(.unsupported, "\(request.method) \(request.url.absoluteString): this transport only fetches (no requests with a body)")
    }
}

extension Transport {
    /// Default for test doubles: buffers the body, then calls `head`, then `sink` once.
    public func get(
        _ request: TransportRequest,
        head: @Sendable (TransportResponse) throws -> Void,
        sink: @Sendable (UnsafeRawBufferPointer) throws -> Void
    ) async throws -> TransportResponse {
        let buffer = TransportBodyBuffer()
        let response = try await get(request) { buffer.append($0) }
        try head(response)
        try buffer.data.withUnsafeBytes { try sink($0) }
        return response
    }
}

/// A transport that streams natively: it implements ``Transport/get(_:head:sink:)`` (head
/// before the first body byte) and gets the plain `get(_:sink:)` from it, so each
/// production transport writes its request path once.
package protocol HeadFirstTransport: Transport {}

extension HeadFirstTransport {
    public func get(_ request: TransportRequest, sink: @Sendable (UnsafeRawBufferPointer) throws -> Void) async throws -> TransportResponse {
        try await get(request, head: { _ in }, sink: sink)
    }
}

/// The body collected by the default ``Transport/get(_:head:sink:)``.
final class TransportBodyBuffer: Sendable {
    // A transport calls its sink serially; `data` is read after `get`.
    private let storage = Mutex(Data())
    /// The bytes appended so far.
    var data: Data { storage.withLock { $0 } }
    func append(_ chunk: UnsafeRawBufferPointer) { storage.withLock { $0.append(contentsOf: chunk) } }
}

/// A GET request for a ``Transport``.
public struct TransportRequest: Sendable, Equatable {
    public var url: URL
    public var headers: [String: String]
    /// Give up when no byte arrives for this long.
    public var idleTimeout: Duration
    /// Give up when the whole request (connect, redirects, head and body) takes longer
    /// than this; `nil` for no limit.
    public var timeLimit: Duration?
    /// Follow redirects (the transport's rule, as for manifests and archives); `false`
    /// returns a 3xx to the caller as it came, and nothing is sent to its `Location`: for a
    /// request whose headers are a credential (`fleet status`'s bearer token) that must
    /// reach the host it was given for and no other.
    public var followsRedirects: Bool
    /// The rate cap this request's body is read under (the device's `downloadRate`), shared
    /// with every other request that carries the same limiter (a download's `Range`
    /// resumes, the other downloads of the check); `nil`: read as fast as it comes.
    ///
    /// Only release payloads carry one (archives, patches and their file lists, Meteor
    /// assets): manifests, indexes, restrictions, trust roots, cohort files and reports
    /// never do. A transport that reads from the network waits in
    /// ``RateLimiter/admit(_:)`` after each chunk, before reading the next, so the socket is
    /// not read meanwhile; the wait is not a stall (``idleTimeout`` does not count it) but
    /// counts toward ``timeLimit``. `file:` URLs and offline media ignore it: their bytes
    /// are local.
    public var rateLimiter: RateLimiter?
    public init(
        url: URL, headers: [String: String] = [:], idleTimeout: Duration = .seconds(30), timeLimit: Duration? = nil,
        followsRedirects: Bool = true, rateLimiter: RateLimiter? = nil
    ) {
        self.url = url
        self.headers = headers
        self.idleTimeout = idleTimeout
        self.timeLimit = timeLimit
        self.followsRedirects = followsRedirects
        self.rateLimiter = rateLimiter
    }
}

/// The head of an HTTP response (or a synthetic one for `file:` URLs).
public struct TransportResponse: Sendable, Equatable {
    public var status: Int
    /// Header names lowercased.
    public var headers: [String: String]
    public init(status: Int, headers: [String: String]) {
        self.status = status
        self.headers = headers
    }
    public subscript(header name: String) -> String? { headers[name.lowercased()] }
}

/// A small request with a body for ``Transport/exchange(_:)`` (a report batch's `POST`).
public struct TransportExchange: Sendable, Equatable {
    /// The most bytes of an answer kept (64 KiB); the rest is not read.
    public static let maxResponseBytes = 64 * 1024

    /// `POST`, `PUT`, …: an upper-case token.
    public var method: String
    public var url: URL
    public var headers: [String: String]
    public var body: Data
    /// Give up when no byte arrives for this long.
    public var idleTimeout: Duration
    /// Give up when the whole exchange takes longer than this.
    public var timeLimit: Duration

    public init(
        method: String, url: URL, headers: [String: String] = [:], body: Data, idleTimeout: Duration = .seconds(10),
        timeLimit: Duration = .seconds(30)
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.idleTimeout = idleTimeout
        self.timeLimit = timeLimit
    }
}

/// The answer to a ``TransportExchange``.
public struct TransportReply: Sendable, Equatable {
    public var status: Int
    /// Header names lowercased.
    public var headers: [String: String]
    /// At most ``TransportExchange/maxResponseBytes`` of the body.
    public var body: Data
    /// The body was longer than ``TransportExchange/maxResponseBytes`` and was cut.
    public var truncated: Bool

    public init(status: Int, headers: [String: String], body: Data, truncated: Bool = false) {
        self.status = status
        self.headers = headers
        self.body = body
        self.truncated = truncated
    }
    public subscript(header name: String) -> String? { headers[name.lowercased()] }
}

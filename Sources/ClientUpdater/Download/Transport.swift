import Foundation
import Synchronization

/// The network seam: the host owns the connection, the core owns the logic.
///
/// Implementations only move bytes. Size caps, hashing, retries and policy live in the
/// core, so a test or another platform can plug in its own transport.
public protocol Transport: Sendable {
    /// Performs a GET and streams the body to `sink` chunk by chunk, as it arrives.
    ///
    /// - Parameters:
    ///   - request: URL and headers (e.g. `If-None-Match`, `Range`).
    ///   - sink: called with each body chunk, serially (never two chunks at once), and
    ///     never after `get` returns; throwing from it aborts the transfer (used to stop
    ///     a body that grows past its cap) and `get` rethrows that error.
    /// - Returns: the response head, once the body has been fully delivered.
    /// - Throws: ``UpdaterError`` `.network` (with a ``TransportFailure`` as the
    ///   underlying cause) for connection failures, truncated bodies and timeouts. An
    ///   HTTP error status is *returned*, not thrown: the caller judges it.
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
    /// Give up when no byte arrives for this long (seconds).
    public var idleTimeout: Double
    /// Give up when the whole request (connect, redirects, head and body) takes longer
    /// than this (seconds); `nil` for no limit.
    public var timeLimit: Double?
    public init(url: URL, headers: [String: String] = [:], idleTimeout: Double = 30, timeLimit: Double? = nil) {
        self.url = url
        self.headers = headers
        self.idleTimeout = idleTimeout
        self.timeLimit = timeLimit
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

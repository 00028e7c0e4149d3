import Foundation

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
    /// - Throws: ``UpdaterError`` `.network` for connection failures and timeouts.
    func get(_ request: TransportRequest, sink: @Sendable (UnsafeRawBufferPointer) throws -> Void) async throws -> TransportResponse
}

/// A GET request for a ``Transport``.
public struct TransportRequest: Sendable, Equatable {
    public var url: URL
    public var headers: [String: String]
    /// Give up when no byte arrives for this long.
    public var idleTimeout: Double
    public init(url: URL, headers: [String: String] = [:], idleTimeout: Double = 30) {
        self.url = url
        self.headers = headers
        self.idleTimeout = idleTimeout
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

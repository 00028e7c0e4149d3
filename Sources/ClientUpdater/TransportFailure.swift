import Foundation

/// Why a transfer failed below HTTP: kept as the `underlying` cause of an
/// ``UpdaterError`` `.network`, so policy (retry or not) can branch on it.
public enum TransportFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// Nothing listens on the port (or the host refused the connection).
    case refused
    /// The connection was reset or lost while talking to the server.
    case reset
    /// No byte arrived within the idle timeout.
    case timedOut(seconds: Double)
    /// The host name could not be resolved.
    case dns
    /// The body ended before the promised `Content-Length`.
    case truncated(received: Int64, expected: Int64)
    /// TLS failed (certificate, handshake).
    case tls
    /// Anything else the transport reported.
    case other(String)

    public var description: String {
        switch self {
        case .refused: return "connection refused"
        case .reset: return "connection reset"
        case .timedOut(let s): return "timed out (no data for \(Self.seconds(s)))"
        case .dns: return "host name not found (DNS)"
        case .truncated(let got, let want): return "body truncated after \(got) of \(want) bytes"
        case .tls: return "TLS failure"
        case .other(let text): return text
        }
    }

    /// Whether trying again later may succeed.
    public var isTransient: Bool {
        switch self {
        case .refused, .reset, .timedOut, .dns, .truncated, .other: return true
        case .tls: return false
        }
    }

    static func seconds(_ s: Double) -> String {
        s == s.rounded() ? "\(Int(s)) s" : String(format: "%.2g s", s)
    }
}

extension UpdaterError {
    /// A `.network` error for `url`, e.g. "GET http://…/app.tgz: connection refused".
    public static func network(_ url: URL, _ failure: TransportFailure) -> UpdaterError {
        UpdaterError(.network, "GET \(url.absoluteString): \(failure)", underlying: failure)
    }

    /// The ``TransportFailure`` behind a `.network` error, if any.
    public var transportFailure: TransportFailure? { underlying as? TransportFailure }
}

/// An HTTP status that is not acceptable, kept as the `underlying` cause of an
/// ``UpdaterError`` `.httpStatus` (so callers can tolerate, e.g., a 404 on a source map).
public struct HTTPStatusFailure: Error, Sendable, Equatable {
    public let status: Int
    public init(status: Int) { self.status = status }

    /// 5xx, 408 (request timeout) and 429 (too many requests) may succeed later.
    public var isTransient: Bool { status >= 500 || status == 408 || status == 429 }
}

extension UpdaterError {
    /// A `.httpStatus` error, e.g. "GET http://…/app.tgz: HTTP 404".
    public static func httpStatus(_ url: URL, _ status: Int, _ detail: String? = nil) -> UpdaterError {
        let suffix = detail.map { " (\($0))" } ?? ""
        return UpdaterError(.httpStatus, "GET \(url.absoluteString): HTTP \(status)\(suffix)", underlying: HTTPStatusFailure(status: status))
    }

    /// The HTTP status behind a `.httpStatus` error, if any.
    public var httpStatus: Int? { (underlying as? HTTPStatusFailure)?.status }

    /// Whether retrying may succeed: network failures (refused, reset, timeout, DNS,
    /// truncated body) and 5xx/408/429 statuses. Everything else is permanent.
    public var isTransient: Bool {
        if code == .network { return transportFailure?.isTransient ?? true }
        if code == .httpStatus { return (underlying as? HTTPStatusFailure)?.isTransient ?? false }
        return false
    }
}

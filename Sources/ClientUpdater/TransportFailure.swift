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

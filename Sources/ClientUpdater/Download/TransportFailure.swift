import ClientFoundation
import Foundation

/// Why a transfer failed below HTTP: kept as the `underlying` cause of a transport's
/// `.network` error (``TransportFailing``) and of an ``UpdaterError`` `.network`, so policy
/// (retry or not) can branch on it.
public enum TransportFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// Nothing listens on the port (or the host refused the connection).
    case refused
    /// The connection was reset or lost while talking to the server.
    case reset
    /// No byte arrived within the idle timeout.
    case timedOut(Duration)
    /// The host name could not be resolved.
    case dns
    /// The body ended before the promised `Content-Length`.
    case truncated(received: Int64, expected: Int64)
    /// TLS failed (certificate, handshake); the text names the problem.
    case tls(String)
    /// The connection could not be set up within the connect timeout.
    case connectTimedOut(Duration)
    /// The whole request took longer than its time limit.
    case deadlineExceeded(Duration)
    /// A redirect was refused (a downgrade from https: to http:, too many hops, a bad `Location`).
    case redirect(String)
    /// The proxy refused or failed the request (retried: it may work later).
    case proxy(String)
    /// The proxy refused the request for a reason no retry can change (a `407`: it wants
    /// credentials, or other ones): fails at once.
    case proxyRejected(String)
    /// Anything else the transport reported.
    case other(String)

    public var description: String {
        switch self {
        case .refused: return "connection refused"
        case .reset: return "connection reset"
        case .timedOut(let s): return "timed out (no data for \(Self.seconds(s)))"
        case .dns: return "host name not found (DNS)"
        case .truncated(let got, let want): return "body truncated after \(got) of \(want) bytes"
        case .tls(let text): return "TLS failure: \(text)"
        case .connectTimedOut(let s): return "connect timed out after \(Self.seconds(s))"
        case .deadlineExceeded(let s): return "took longer than the time limit of \(Self.seconds(s))"
        case .redirect(let text): return "redirect refused: \(text)"
        case .proxy(let text), .proxyRejected(let text): return "proxy failure: \(text)"
        case .other(let text): return text
        }
    }

    /// Whether trying again later may succeed.
    public var isTransient: Bool {
        switch self {
        case .refused, .reset, .timedOut, .dns, .truncated, .connectTimedOut, .deadlineExceeded, .proxy, .other: return true
        case .tls, .redirect, .proxyRejected: return false
        }
    }

    /// `duration` as a person reads it: whole seconds, else two significant digits.
    static func seconds(_ duration: Duration) -> String {
        let s = duration.inSeconds
        return s == s.rounded() ? "\(Int(s)) s" : String(format: "%.2g s", s)
    }
}

/// An HTTP status that is not acceptable, kept as the `underlying` cause of an
/// ``UpdaterError`` `.httpStatus` or of another module's error about a status
/// (``TransportFailing/statusFailure``), so callers can tolerate, e.g., a 404 on a source
/// map, and the retry loop retries a 5xx.
public struct HTTPStatusFailure: Error, Sendable, Equatable {
    public let status: Int
    /// How long the server asked to be left alone (its `Retry-After`, RFC 9110 §10.2.3), when
    /// it said so: a periodic check waits at least that long before the next one.
    public let retryAfter: Duration?
    public init(status: Int, retryAfter: Duration? = nil) {
        self.status = status
        self.retryAfter = retryAfter
    }

    /// 5xx, 408 (request timeout) and 429 (too many requests) may succeed later.
    public var isTransient: Bool { status >= 500 || status == 408 || status == 429 }
}

extension UpdaterError {
    /// A `.httpStatus` error, e.g. "GET http://…/app.tgz: HTTP 404".
    public static func httpStatus(_ url: URL, _ status: Int, _ detail: String? = nil, retryAfter: Duration? = nil) -> UpdaterError {
        let suffix = detail.map { " (\($0))" } ?? ""
        return UpdaterError(
            .httpStatus, "GET \(url.absoluteString): HTTP \(status)\(suffix)", underlying: HTTPStatusFailure(status: status, retryAfter: retryAfter))
    }
}

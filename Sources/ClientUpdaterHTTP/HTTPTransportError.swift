import ClientFoundation
import ClientUpdater

/// The HTTP transport's error: a request that failed below HTTP, a URL it does not speak,
/// a transport used after its shutdown, and settings it cannot use (a proxy value it cannot
/// parse, a CA file it cannot load).
///
/// A request's failure below HTTP is `.network` with a `TransportFailure` as its cause
/// (the message "GET <url>: connection refused" as ClientUpdater words it): ClientUpdater
/// reads it through `TransportFailing`, retries it when it is transient and says it as its
/// own `UpdaterError` to the downloader's callers (as AsyncHTTPClient's errors are the ones
/// NIO's channel reports). A settings problem that
/// ``HTTPTransportSettings/forDevice(_:root:)`` or ``HTTPTransportSettings/fromEnvironment(_:)``
/// put off is `.configInvalid`, thrown by the first request.
public typealias HTTPTransportError = ModuleError<HTTPTransportErrorCode>

/// The code of ``HTTPTransportError``: what kind of failure it is. New codes may be added in later versions.
public struct HTTPTransportErrorCode: TransportFailureCode {
    fileprivate enum Base: Hashable, Sendable {
        case configInvalid, notFound, io, tooLarge, rejected
        case network, unsupported, shutDown
    }
    fileprivate let base: Base
    public var description: String { "\(base)" }

    /// A proxy that cannot be parsed, or a `caFile` that cannot be used, in a device's
    /// config or the environment.
    public static let configInvalid = Self(base: .configInvalid)
    /// A CA file that does not exist.
    public static let notFound = Self(base: .notFound)
    /// A CA file that cannot be read or is not a regular file.
    public static let io = Self(base: .io)
    /// A CA file over its cap.
    public static let tooLarge = Self(base: .tooLarge)
    /// A CA file with no PEM certificate, or a `CERTIFICATE` block that is not one.
    public static let rejected = Self(base: .rejected)
    /// A request failed below HTTP (refused, reset, timed out, TLS, a refused redirect):
    /// the `TransportFailure` is the underlying cause.
    public static let network = Self(base: .network)
    /// A URL scheme the transport does not speak, or a request with a body to a `file:` URL.
    public static let unsupported = Self(base: .unsupported)
    /// A request on a transport whose `HTTPClientRegistry` was shut down: a bug of the host.
    public static let shutDown = Self(base: .shutDown)

    /// The sysexits status, as `UpdaterError`'s codes of the same meaning: 78 config,
    /// 66 missing input, 73 cannot read, 65 bad data, 69 unavailable (`.network`), 70
    /// internal (`.shutDown`).
    public func kind(underlying: (any Error & Sendable)?) -> FailureKind {
        switch base {
        case .configInvalid: return .config
        case .notFound: return .noInput
        case .io: return .cannotCreate
        case .tooLarge, .rejected, .unsupported: return .dataError
        case .network: return .unavailable
        case .shutDown: return .software
        }
    }
}

import ClientFoundation

/// An error of the HTTP transport's settings: a proxy value it cannot parse, a CA file it
/// cannot load.
///
/// A request's own failures are the `Transport` contract's error, ClientUpdater's
/// `UpdaterError`: `.network` with a `TransportFailure` (which the downloader retries
/// when it is transient), `.unsupported` for a scheme it does not speak, `.internalError`
/// after a shutdown, as AsyncHTTPClient's errors are the ones NIO's channel reports. A
/// settings problem that ``HTTPTransportSettings/forDevice(_:root:)`` or
/// ``HTTPTransportSettings/fromEnvironment(_:)`` put off is this error, thrown by the
/// first request.
public typealias HTTPTransportError = ModuleError<HTTPTransportErrorCode>

/// The code of ``HTTPTransportError``: what kind of failure it is. New codes may be added in later versions.
public struct HTTPTransportErrorCode: ClientctlErrorCode {
    fileprivate enum Base: Hashable, Sendable {
        case configInvalid, notFound, io, tooLarge, rejected
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

    /// The sysexits status, as `UpdaterError`'s codes of the same name: 78 config,
    /// 66 missing input, 73 cannot read, 65 bad data.
    public func kind(underlying: (any Error & Sendable)?) -> FailureKind {
        switch base {
        case .configInvalid: return .config
        case .notFound: return .noInput
        case .io: return .cannotCreate
        case .tooLarge, .rejected: return .dataError
        }
    }
}

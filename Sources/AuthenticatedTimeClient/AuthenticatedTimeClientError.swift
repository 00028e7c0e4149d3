import ClientFoundation

/// An error of asking a Roughtime server over the network: no valid answer in time, a
/// socket that cannot be opened or written, a host name that does not resolve.
///
/// Its message names the server and why (`roughtime://127.0.0.1:2002: no valid answer
/// within 2.0 seconds; ignored an answer: …`). What an answer's bytes fail with (malformed,
/// unverified) and a quorum that is not reached are AuthenticatedTime's `AuthenticatedTimeError`.
public typealias AuthenticatedTimeClientError = ModuleError<AuthenticatedTimeClientErrorCode>

/// The code of ``AuthenticatedTimeClientError``. New codes may be added in later versions.
public struct AuthenticatedTimeClientErrorCode: ClientctlErrorCode {
    fileprivate enum Base: Hashable, Sendable {
        case timedOut, network, unresolved
    }
    fileprivate let base: Base
    public var description: String { "\(base)" }

    /// No valid answer within the query's time.
    public static let timedOut = Self(base: .timedOut)
    /// The socket could not be opened, bound or written.
    public static let network = Self(base: .network)
    /// The server's host name does not resolve.
    public static let unresolved = Self(base: .unresolved)

    /// A temporary failure for the network, a configuration error for a host that does not resolve.
    public func kind(underlying: (any Error & Sendable)?) -> FailureKind {
        switch base {
        case .timedOut, .network: .tempFail
        case .unresolved: .config
        }
    }
}

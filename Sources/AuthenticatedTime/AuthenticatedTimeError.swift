import ClientFoundation

/// An error of authenticated time: a Roughtime packet that is not what RFC 10049 says, an
/// answer that does not verify, a server's address or key that is not one, or servers that
/// do not agree. (A server that does not answer is the UDP client's error,
/// `AuthenticatedTimeClientError` of AuthenticatedTimeClient.)
///
/// Its message names what and why (`SREP.RADI: 2 bytes, expected 4`,
/// `authenticated time: no 2 verified answers overlap, the quorum is 2 of 3: …`).
public typealias AuthenticatedTimeError = ModuleError<AuthenticatedTimeErrorCode>

/// The code of ``AuthenticatedTimeError``. New codes may be added in later versions.
public struct AuthenticatedTimeErrorCode: ClientctlErrorCode {
    fileprivate enum Base: Hashable, Sendable {
        case malformed, unverified, invalidServer, noQuorum
    }
    fileprivate let base: Base
    public var description: String { "\(base)" }

    /// A packet that does not parse: truncated, wrong offsets, unsorted tags, a missing or
    /// wrongly sized field, too large.
    public static let malformed = Self(base: .malformed)
    /// A well-formed answer that does not prove the time: a bad signature, a nonce not in
    /// the signed tree, a midpoint outside the delegation's window, another version.
    public static let unverified = Self(base: .unverified)
    /// A server's address or key that is not `roughtime://HOST:PORT` and a 32-byte Ed25519 key.
    public static let invalidServer = Self(base: .invalidServer)
    /// Fewer verified answers agree than the quorum asks for.
    public static let noQuorum = Self(base: .noQuorum)

    /// Bad data for packets and answers, a configuration error for a server's name, a
    /// temporary failure for the quorum.
    public func kind(underlying: (any Error & Sendable)?) -> FailureKind {
        switch base {
        case .malformed, .unverified: .dataError
        case .invalidServer: .config
        case .noQuorum: .tempFail
        }
    }
}

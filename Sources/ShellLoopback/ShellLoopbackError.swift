import ClientFoundation

/// An error of the shell's loopback origin: a port it cannot serve on.
///
/// Refusals of a request (a used launch link, another client) are HTTP answers, not errors
/// a caller sees.
package typealias ShellLoopbackError = ModuleError<ShellLoopbackErrorCode>

/// The code of ``ShellLoopbackError``: what kind of failure it is. New codes may be added in later versions.
package struct ShellLoopbackErrorCode: ClientctlErrorCode {
    fileprivate enum Base: Hashable, Sendable {
        case cannotListen
    }
    fileprivate let base: Base
    package var description: String { "\(base)" }

    /// The server could not bind or run (as ClientServer's `ServerError` `.cannotListen`).
    package static let cannotListen = Self(base: .cannotListen)

    /// The sysexits status: 69 unavailable.
    package func kind(underlying: (any Error & Sendable)?) -> FailureKind {
        switch base {
        case .cannotListen: return .unavailable
        }
    }
}

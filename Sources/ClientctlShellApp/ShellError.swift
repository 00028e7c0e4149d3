import ClientFoundation

/// An error the shell decides itself before its window opens: flags that do not go
/// together, a loopback origin with no port to listen on.
///
/// What the modules under it throw keeps its own type (the engine's, a channel's, the
/// serving core's); the shell prints any `ClientctlError` as one line and exits with its
/// kind's status.
package typealias ShellError = ModuleError<ShellErrorCode>

/// The code of ``ShellError``: what kind of failure it is. New codes may be added in later versions.
package struct ShellErrorCode: ClientctlErrorCode {
    fileprivate enum Base: Hashable, Sendable {
        case invalidArgument, cannotListen
    }
    fileprivate let base: Base
    package var description: String { "\(base)" }

    /// Flags that cannot be used together (`--port` without `--origin loopback`).
    package static let invalidArgument = Self(base: .invalidArgument)
    /// The loopback origin could bind no port.
    package static let cannotListen = Self(base: .cannotListen)

    /// The sysexits status: 64 usage, 69 unavailable (as `UpdaterError`'s
    /// `.invalidArgument` and `ServerError`'s `.cannotListen`).
    package func kind(underlying: (any Error & Sendable)?) -> FailureKind {
        switch base {
        case .invalidArgument: return .usage
        case .cannotListen: return .unavailable
        }
    }
}

import ClientFoundation
import CommandSupport

/// An error the command line decides itself: flags that do not go together, an input file
/// a command reads that is missing or too large, an output it must not overwrite, an
/// archive that does not match its manifest in `verify`.
///
/// What the modules under a command throw keeps its own type; ``runReportingErrors(_:)``
/// prints any `ClientctlError` as one line and exits with its kind's status.
package typealias CommandError = ModuleError<CommandErrorCode>

/// The code of ``CommandError``: what kind of failure it is. New codes may be added in later versions.
package struct CommandErrorCode: ClientctlErrorCode {
    fileprivate enum Base: Hashable, Sendable {
        case invalidArgument, notFound, alreadyExists, io, tooLarge, rejected, hashMismatch, sizeMismatch
        case unauthorized, unavailable
    }
    fileprivate let base: Base
    package var description: String { "\(base)" }

    /// Flags that cannot be used, or not together.
    package static let invalidArgument = Self(base: .invalidArgument)
    /// An input file or folder that does not exist or cannot be read.
    package static let notFound = Self(base: .notFound)
    /// An output that must not be overwritten exists already.
    package static let alreadyExists = Self(base: .alreadyExists)
    /// An output file cannot be written.
    package static let io = Self(base: .io)
    /// An input over the command's byte limit.
    package static let tooLarge = Self(base: .tooLarge)
    /// An input a flag names that is refused as data (a `--ca-file` without a usable
    /// certificate).
    package static let rejected = Self(base: .rejected)
    /// An archive whose bytes do not match its manifest's `sha256`.
    package static let hashMismatch = Self(base: .hashMismatch)
    /// An archive whose length does not match its manifest's `size`.
    package static let sizeMismatch = Self(base: .sizeMismatch)
    /// A service refused the credentials a flag gave (`fleet status`'s read token: HTTP 401).
    package static let unauthorized = Self(base: .unauthorized)
    /// A service a command asked answered that it cannot serve now (HTTP 5xx or 429).
    package static let unavailable = Self(base: .unavailable)

    /// The sysexits status: 64 usage, 66 missing input, 73 cannot create, 65 bad data,
    /// 78 refused credentials, 69 a service unavailable.
    package func kind(underlying: (any Error & Sendable)?) -> FailureKind {
        switch base {
        case .invalidArgument: return .usage
        case .notFound: return .noInput
        case .alreadyExists, .io: return .cannotCreate
        case .tooLarge, .rejected, .hashMismatch, .sizeMismatch: return .dataError
        case .unauthorized: return .config
        case .unavailable: return .unavailable
        }
    }
}

extension CommandErrorCode: FieldReportingCode {}

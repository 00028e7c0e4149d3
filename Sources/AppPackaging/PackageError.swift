import ClientFoundation

/// An error from AppPackaging: a `clientctl package` input Debian or a device would refuse,
/// binaries that are not self-contained, or a Debian tool that failed.
package typealias PackageError = ModuleError<PackageErrorCode>

/// The code of ``PackageError``. New codes may be added in later versions.
package struct PackageErrorCode: ClientctlErrorCode {
    fileprivate enum Base: Hashable, Sendable {
        case invalidArgument, rejected, notFound, notSelfContained, toolFailed, alreadyExists, io
    }
    fileprivate let base: Base
    package var description: String { "\(base)" }

    /// A flag value Debian refuses (package name, version, maintainer) or out of range.
    package static let invalidArgument = Self(base: .invalidArgument)
    /// An input file whose content is refused: an icon that is no square PNG or SVG, a seed
    /// that breaks the publish rules, a trust file `init` would refuse.
    package static let rejected = Self(base: .rejected)
    /// An input file or folder that does not exist.
    package static let notFound = Self(base: .notFound)
    /// The binaries beside the running clientctl need the Swift toolchain's libraries.
    package static let notSelfContained = Self(base: .notSelfContained)
    /// A Debian tool (`dpkg-deb`, `dpkg-shlibdeps`, `objdump`) is missing, failed or ran too long.
    package static let toolFailed = Self(base: .toolFailed)
    /// The .deb exists already with other bytes (it is never overwritten).
    package static let alreadyExists = Self(base: .alreadyExists)
    /// A file system call failed while staging or writing.
    package static let io = Self(base: .io)

    /// 64 bad flag, 65 refused input, 66 missing input, 69 a tool or self-contained binaries
    /// unavailable, 73 cannot create.
    package func kind(underlying: (any Error & Sendable)?) -> FailureKind {
        switch base {
        case .invalidArgument: return .usage
        case .rejected: return .dataError
        case .notFound: return .noInput
        case .notSelfContained, .toolFailed: return .unavailable
        case .alreadyExists, .io: return .cannotCreate
        }
    }
}

import ClientFoundation

/// An error from AppPackaging: a `clientctl package` input Debian or a device would refuse,
/// binaries that are not self-contained, a Debian tool that failed, or a `clientctl repo`
/// change refused (a folder that is not a repository of ours, a key that cannot sign, a
/// .deb `package` did not make, a version held with other bytes).
package typealias PackageError = ModuleError<PackageErrorCode>

/// The code of ``PackageError``. New codes may be added in later versions.
package struct PackageErrorCode: ClientctlErrorCode {
    fileprivate enum Base: Hashable, Sendable {
        case invalidArgument, rejected, notFound, notSelfContained, toolFailed, alreadyExists, io
        case notARepository, unusableKey, foreignPackage, versionConflict, busy
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

    /// `repo`: the `--repo` folder exists, holds something and is not an apt repository
    /// `clientctl repo` made (it is never written into).
    package static let notARepository = Self(base: .notARepository)
    /// `repo`: the `--gpg-key` is no OpenPGP secret key that signs without a passphrase
    /// (garbage, a public key, a protected key); `package --apt-key`: no public key.
    package static let unusableKey = Self(base: .unusableKey)
    /// `repo add`: a .deb that `clientctl package` did not make (no `X-Clientctl-Template`).
    package static let foreignPackage = Self(base: .foreignPackage)
    /// `repo add`: the suite (or the pool) holds this version with other bytes, or a newer one.
    package static let versionConflict = Self(base: .versionConflict)
    /// `repo`: another `clientctl repo` is changing the repository.
    package static let busy = Self(base: .busy)

    /// 64 bad flag, 65 refused input (a key that cannot sign, a foreign .deb), 66 missing
    /// input, 69 a tool or self-contained binaries unavailable, 73 cannot create (a file or a
    /// version that exists with other bytes, a folder that is not our repository), 75 busy.
    package func kind(underlying: (any Error & Sendable)?) -> FailureKind {
        switch base {
        case .invalidArgument: return .usage
        case .rejected, .unusableKey, .foreignPackage: return .dataError
        case .notFound: return .noInput
        case .notSelfContained, .toolFailed: return .unavailable
        case .alreadyExists, .io, .notARepository, .versionConflict: return .cannotCreate
        case .busy: return .tempFail
        }
    }
}

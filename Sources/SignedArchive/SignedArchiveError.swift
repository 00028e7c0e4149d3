import ClientFoundation
import Foundation

/// An error the signed-archive channel decides itself: a release the device refuses, a
/// root's setup or config it cannot use, its store of installed releases.
///
/// What it rethrows keeps its own type: SignedManifest's `SignedManifestError` (a manifest,
/// signature or trust root refused), SafeArchive's `SafeArchiveError` (an archive's
/// entries), DeltaPatch's `DeltaError` (a patch that does not apply), and ClientUpdater's `UpdaterError` from the
/// downloader and the root's files. Where it implements ClientUpdater's `UpdateChannel`
/// contract it fails with this error too: ``ArchiveChannel/servedAssets(for:)`` with
/// `.notFound` or `.invalidArgument` and an `UnservableVersion` cause, which the updater's
/// watchdog acts on.
package typealias SignedArchiveError = ModuleError<SignedArchiveErrorCode>

/// The code of ``SignedArchiveError``: what kind of failure it is. New codes may be added in later versions.
package struct SignedArchiveErrorCode: ClientctlErrorCode {
    fileprivate enum Base: Hashable, Sendable {
        case archiveRejected, archiveLimit, deltaRejected, configInvalid, corruptState
        case invalidArgument, notFound, alreadyExists, io, internalError
        case channelNotAllowed, mediaRefused, originUnreachable
    }
    fileprivate let base: Base
    package var description: String { "\(base)" }

    /// A release the device refuses as a whole: its manifest is for another app or
    /// channel or below what the device accepted before (a rollback), or its archive is
    /// not a .tar.gz, .zip or .tar.zst.
    package static let archiveRejected = Self(base: .archiveRejected)
    /// Past a cap: a release archive over the device's byte cap.
    package static let archiveLimit = Self(base: .archiveLimit)
    /// A delta or file list the device refuses (malformed, over its cap, a base or a
    /// patched tree that is not the signed one): the full archive is used instead.
    package static let deltaRejected = Self(base: .deltaRejected)
    /// The root's `config.json` is not a signed-archive root's, lacks a field the channel
    /// needs, or names trust the device cannot read.
    package static let configInvalid = Self(base: .configInvalid)
    /// A file the channel keeps in the root (a sidecar, a deferred manifest, a stored trust
    /// root) cannot be read as expected.
    package static let corruptState = Self(base: .corruptState)
    /// A caller passed a value that cannot be used (a root's setup field).
    package static let invalidArgument = Self(base: .invalidArgument)
    /// An input file or folder that does not exist or cannot be read.
    package static let notFound = Self(base: .notFound)
    /// A release folder that must not be overwritten exists already.
    package static let alreadyExists = Self(base: .alreadyExists)
    /// A system call on the file system failed (the store, a delta's staging).
    package static let io = Self(base: .io)
    /// An unexpected failure: a bug.
    package static let internalError = Self(base: .internalError)
    /// A channel the device's trust root does not let it choose (`clientctl channel set`,
    /// the page's `setChannel`), or a manifest of such a channel: nothing is written.
    package static let channelNotAllowed = Self(base: .channelNotAllowed)
    /// Offline media the device refuses (docs/offline-media.md): a symbolic or hard link,
    /// a special file, a path out of its folder, a file over its cap or other than its
    /// index lists, one that changed while it was copied, a manifest its index does not
    /// name. Nothing of it is taken.
    package static let mediaRefused = Self(base: .mediaRefused)
    /// The origin did not answer and what the site mirrors serve instead cannot be taken (a
    /// manifest older than the one this device accepted: a mirror that lags): the device
    /// keeps what it runs, and the check fails so that it is seen.
    package static let originUnreachable = Self(base: .originUnreachable)

    /// The sysexits status, as `UpdaterError`'s and `SignedManifestError`'s codes of the same
    /// name: 65 for a refused release, 78 config, 64 usage, 66 missing input, 73 cannot
    /// create, 70 internal; 77 a channel the trust root does not allow; 69 an origin out of
    /// reach whose mirrors cannot stand in.
    package func kind(underlying: (any Error & Sendable)?) -> FailureKind {
        switch base {
        case .archiveRejected, .archiveLimit, .deltaRejected, .mediaRefused: return .dataError
        case .configInvalid, .corruptState: return .config
        case .invalidArgument: return .usage
        case .notFound: return .noInput
        case .alreadyExists, .io: return .cannotCreate
        case .internalError: return .software
        case .channelNotAllowed: return .notPermitted
        case .originUnreachable: return .unavailable
        }
    }
}

extension SignedArchiveErrorCode: FieldReportingCode {}

extension SignedArchiveError {
    /// An I/O error from a failed system call, with `errno` decoded (the message and cause
    /// `UpdaterError.io` gives).
    static func io(_ what: String, path: String, errno code: Int32) -> SignedArchiveError {
        SignedArchiveError(.io, "\(what) \(path): \(String(cString: strerror(code)))", underlying: POSIXErrorBox(code: code))
    }
}

import ClientFoundation
import Foundation

/// An error of `clientctl mirror` (docs/site-mirror.md): what the origin served that the
/// mirror refuses, a folder it cannot use, another run holding it.
///
/// Every one leaves the mirror's folder exactly as the last good run left it. What the
/// mirror rethrows keeps its own type: ClientUpdater's `UpdaterError` from the downloader
/// (an origin that does not answer, a status, a size or digest that is not the signed one).
package typealias SiteMirrorError = ModuleError<SiteMirrorErrorCode>

/// The code of ``SiteMirrorError``. New codes may be added in later versions.
package struct SiteMirrorErrorCode: ClientctlErrorCode {
    fileprivate enum Base: Hashable, Sendable {
        case refused, stale, replay, invalidArgument, notFound, locked, io, link, internalError
    }
    fileprivate let base: Base
    package var description: String { "\(base)" }

    /// Something the origin serves that does not verify (a manifest, a trust root, a
    /// restriction, an archive, a patch or a cohort file that is not the signed one).
    package static let refused = Self(base: .refused)
    /// The origin's manifest has expired: a device would refuse it as a stale feed.
    package static let stale = Self(base: .stale)
    /// The origin's manifest is older than the one the mirror holds (a lower version, or
    /// an earlier `published`): a stale cache or a replay, refused as a device refuses it.
    package static let replay = Self(base: .replay)
    /// A flag the mirror cannot use (a URL, a key file, a folder).
    package static let invalidArgument = Self(base: .invalidArgument)
    /// A file the arguments name that does not exist.
    package static let notFound = Self(base: .notFound)
    /// Another `clientctl mirror` holds the folder.
    package static let locked = Self(base: .locked)
    /// A system call on the mirror's folder failed.
    package static let io = Self(base: .io)
    /// A symbolic link inside the mirror's folder on a path the run reads, writes or prunes:
    /// the run would write (or delete) wherever it points, so it writes nothing.
    package static let link = Self(base: .link)
    /// An unexpected failure: a bug.
    package static let internalError = Self(base: .internalError)

    /// The sysexits status: 65 for what the origin served and the mirror refuses (a
    /// stale or replayed manifest included), 64 usage, 66 missing input, 75 another run
    /// holds the folder, 73 cannot write (a symbolic link in the folder included), 70 internal.
    package func kind(underlying: (any Error & Sendable)?) -> FailureKind {
        switch base {
        case .refused, .stale, .replay: return .dataError
        case .invalidArgument: return .usage
        case .notFound: return .noInput
        case .locked: return .tempFail
        case .io, .link: return .cannotCreate
        case .internalError: return .software
        }
    }
}

extension SiteMirrorErrorCode: FieldReportingCode {}

extension SiteMirrorError {
    /// An `.io` error of a failed system call, `errno` decoded.
    static func io(_ what: String, path: String, errno code: Int32) -> SiteMirrorError {
        SiteMirrorError(.io, "\(what) \(path): \(String(cString: strerror(code)))", underlying: POSIXErrorBox(code: code))
    }
}

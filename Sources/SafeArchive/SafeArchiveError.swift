import ClientFoundation

/// An error from SafeArchive: an archive or a signed file list refused by the entry rule or
/// the caps, a folder to archive that breaks a rule, or a local failure while reading,
/// unpacking or writing.
///
/// Like the other modules' errors: an extensible ``SafeArchiveErrorCode``, a one-line message that names
/// what failed and why (the entry or the path, and the rule), and the underlying cause
/// when there is one.
public typealias SafeArchiveError = ModuleError<SafeArchiveErrorCode>

/// The code of ``SafeArchiveError``: what kind of failure it is. New codes may be added in later versions.
public struct SafeArchiveErrorCode: ClientctlErrorCode {
    fileprivate enum Base: Hashable, Sendable {
        case archiveRejected, archiveLimit, archiveFailed, sourceRejected, notFound, alreadyExists, io, internalError
    }
    fileprivate let base: Base
    public var description: String { "\(base)" }

    /// An archive or file list refused by the entry rule (path, type, duplicate, conflict),
    /// of an unsupported kind, empty, or without a regular `index.html` at its root.
    public static let archiveRejected = Self(base: .archiveRejected)
    /// An archive or file list past a cap of ``ExtractionLimits`` (bytes, entries, ratio).
    public static let archiveLimit = Self(base: .archiveLimit)
    /// A damaged archive (truncated, bad checksum or CRC, inconsistent zip directory), or
    /// libarchive failed to write one.
    public static let archiveFailed = Self(base: .archiveFailed)
    /// A folder to archive that breaks a rule of ``SourceTree`` (no `index.html`, a
    /// symlink, a special file, a bad name), or a file that changed while it was archived.
    public static let sourceRejected = Self(base: .sourceRejected)
    /// An archive file or a folder to archive that does not exist or cannot be opened.
    public static let notFound = Self(base: .notFound)
    /// The staging folder or the archive to write exists already.
    public static let alreadyExists = Self(base: .alreadyExists)
    /// A system call on the file system failed.
    public static let io = Self(base: .io)
    /// An unexpected failure of libarchive or of this module: a bug.
    public static let internalError = Self(base: .internalError)

    /// The sysexits status: 65 for a refused or damaged archive or folder, 66 missing
    /// input, 73 cannot create, 70 internal.
    public func kind(underlying: (any Error & Sendable)?) -> FailureKind {
        switch base {
        case .archiveRejected, .archiveLimit, .archiveFailed, .sourceRejected: return .dataError
        case .notFound: return .noInput
        case .alreadyExists, .io: return .cannotCreate
        case .internalError: return .software
        }
    }
}

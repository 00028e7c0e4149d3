import ClientFoundation

/// An error of publishing a release: building its archive, manifest and delta patches,
/// editing a release folder, and pushing it to S3-compatible storage.
///
/// Manifests, keys, signatures and trust roots fail with SignedManifest's
/// `ArchivePublishingError`; archive entries and caps with SafeArchive's `SafeArchiveError`.
public typealias ArchivePublishingError = ModuleError<ArchivePublishingErrorCode>

/// The code of ``ArchivePublishingError``: what kind of failure it is. New codes may be added in later versions.
public struct ArchivePublishingErrorCode: ClientctlErrorCode {
    fileprivate enum Base: Hashable, Sendable {
        case invalidManifest, untrustedKey, thresholdNotMet, archiveLimit, archiveFailed
        case sourceRejected, conflict, notNewer, alreadyExists, notFound, io, invalidArgument, busy
        case internalError, storageUnavailable, storageDenied, contended, storageWriteLost, storageMisbehaved
        case needsFlag, unfollowablePin
    }
    fileprivate let base: Base
    public var description: String { "\(base)" }

    /// A manifest or index of a release folder or object store that is not valid.
    public static let invalidManifest = Self(base: .invalidManifest)
    /// A signer that is not a release key of the channel's trust root.
    public static let untrustedKey = Self(base: .untrustedKey)
    /// Fewer distinct release keys signed than the root's threshold asks.
    public static let thresholdNotMet = Self(base: .thresholdNotMet)
    /// An object store's answer or listing over its size or count limit.
    public static let archiveLimit = Self(base: .archiveLimit)
    /// A release's archive could not be turned into what publishing needs (a delta patch
    /// from an earlier release).
    public static let archiveFailed = Self(base: .archiveFailed)
    /// A file of a release folder to push that is not a regular file.
    public static let sourceRejected = Self(base: .sourceRejected)
    /// A version already published with other bytes, or a release folder of another app.
    public static let conflict = Self(base: .conflict)
    /// A version that is not above the newest release of the channel.
    public static let notNewer = Self(base: .notNewer)
    /// An output that must not be overwritten exists already.
    public static let alreadyExists = Self(base: .alreadyExists)
    /// An input file or folder that does not exist or cannot be read.
    public static let notFound = Self(base: .notFound)
    /// A system call on the file system failed.
    public static let io = Self(base: .io)
    /// A caller passed a value that cannot be used.
    public static let invalidArgument = Self(base: .invalidArgument)
    /// Another process is working on the same folder; retry later.
    public static let busy = Self(base: .busy)
    /// An unexpected failure: a bug.
    public static let internalError = Self(base: .internalError)
    /// An object store (a push's S3 endpoint) could not be reached or kept failing.
    public static let storageUnavailable = Self(base: .storageUnavailable)
    /// An object store refused the request (credentials, permissions, bucket).
    public static let storageDenied = Self(base: .storageDenied)
    /// Other writers kept changing the channel's pointers during every retry.
    public static let contended = Self(base: .contended)
    /// An object store did not keep a write: it answered a `PUT` with a status no stored
    /// write has (`404`, `304`), or read it back with other bytes.
    public static let storageWriteLost = Self(base: .storageWriteLost)
    /// An object store answered what S3 never answers: a listing that repeats a
    /// continuation token, is truncated without one, or does not end within its page cap.
    public static let storageMisbehaved = Self(base: .storageMisbehaved)

    /// An act that changes more than it seems to, refused without the flag that names it:
    /// an edit that would lift a halt of the channel's release (`--lift-halt`), a `published`
    /// time far beyond the channel's newest (`--allow-far-future`), a pin to an expired
    /// release (`--allow-expired`).
    public static let needsFlag = Self(base: .needsFlag)
    /// A pin no device could follow: to a release the channel revokes.
    public static let unfollowablePin = Self(base: .unfollowablePin)

    /// The sysexits status: 65 for bad or rejected data, 66 missing input, 73 cannot create,
    /// 64 usage, 75 busy or contended, 69 a store unavailable, 78 a store refusing, 70 internal,
    /// 77 an act refused without the flag that names it.
    public func kind(underlying: (any Error & Sendable)?) -> FailureKind {
        switch base {
        case .invalidManifest, .untrustedKey, .thresholdNotMet, .archiveLimit, .archiveFailed,
            .sourceRejected, .conflict, .notNewer, .storageMisbehaved, .unfollowablePin:
            return .dataError
        case .internalError: return .software
        case .alreadyExists, .io, .storageWriteLost: return .cannotCreate
        case .notFound: return .noInput
        case .invalidArgument: return .usage
        case .busy, .contended: return .tempFail
        case .storageUnavailable: return .unavailable
        case .storageDenied: return .config
        case .needsFlag: return .notPermitted
        }
    }
}

extension ArchivePublishingErrorCode: FieldReportingCode {}

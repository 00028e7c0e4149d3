import ClientFoundation

/// An error of SignedManifest's rules: manifests and indexes, keys and signers,
/// signatures, trust roots and rollout.
///
/// Strict JSON fails with StrictJSON's `StrictJSONError` (SignedManifest's readers wrap it
/// as `.malformedJSON`); refusals of an archive's entries, caps and of a folder to archive
/// are SafeArchive's own `SafeArchiveError`; delta patches fail with DeltaPatch's
/// `DeltaError`; publishing and pushing a release with ArchivePublishing's
/// `ArchivePublishingError`.
///
/// Like `UpdaterError`: an extensible ``SignedManifestErrorCode``, a one-line message that names what failed
/// and why, and the underlying cause when there is one.
public typealias SignedManifestError = ModuleError<SignedManifestErrorCode>

/// The code of ``SignedManifestError``: what kind of failure it is. New codes may be added in later versions.
public struct SignedManifestErrorCode: ClientctlErrorCode {
    fileprivate enum Base: Hashable, Sendable {
        case malformedJSON, invalidManifest, invalidSignature, untrustedKey, invalidKey, crypto
        case alreadyExists, notFound, io, invalidArgument
        case internalError, untrustedRoot, rootExpired, thresholdNotMet
        case signerUnavailable, restrictionRefused, mediaRefused
    }
    fileprivate let base: Base
    public var description: String { "\(base)" }

    /// JSON text that is not strictly valid (syntax, duplicate keys, depth, size, UTF-8).
    public static let malformedJSON = Self(base: .malformedJSON)
    /// A manifest or index that is not valid against the `signed-client-v1` schema.
    public static let invalidManifest = Self(base: .invalidManifest)
    /// A signature that does not verify.
    public static let invalidSignature = Self(base: .invalidSignature)
    /// A manifest signed by a key that is not trusted.
    public static let untrustedKey = Self(base: .untrustedKey)
    /// A key file or key bytes that cannot be used (not PEM, not Ed25519, truncated).
    public static let invalidKey = Self(base: .invalidKey)
    /// An OpenSSL call failed unexpectedly; the message carries OpenSSL's error queue.
    public static let crypto = Self(base: .crypto)
    /// An output that must not be overwritten exists already.
    public static let alreadyExists = Self(base: .alreadyExists)
    /// An input file or folder that does not exist or cannot be read.
    public static let notFound = Self(base: .notFound)
    /// A system call on the file system failed.
    public static let io = Self(base: .io)
    /// A caller passed a value that cannot be used.
    public static let invalidArgument = Self(base: .invalidArgument)
    /// An unexpected failure: a bug.
    public static let internalError = Self(base: .internalError)
    /// A trust root (`root/N.json`) was refused: malformed, rolled back, skipped, for
    /// another channel, or not signed by a threshold of the previous and its own root keys.
    public static let untrustedRoot = Self(base: .untrustedRoot)
    /// The device's trust root is past its `expires`: no update is accepted until a
    /// newer root is published (TUF's freeze-attack rule).
    public static let rootExpired = Self(base: .rootExpired)
    /// Fewer distinct release keys signed than the root's threshold asks.
    public static let thresholdNotMet = Self(base: .thresholdNotMet)
    /// A `--sign-command` could not be started, failed, was killed, or ran over its time
    /// limit: the signing service (HSM, KMS, token) is unavailable.
    public static let signerUnavailable = Self(base: .signerUnavailable)
    /// A restriction (`restriction.json`) of the rollout role was refused: malformed, not
    /// signed by a threshold of the trust root's `rollout` keys, or asking for more than
    /// the manifest it restricts (a higher percent, a later expiry, a version above it).
    public static let restrictionRefused = Self(base: .restrictionRefused)
    /// An offline media index (`media.json`, docs/offline-media.md) was refused: malformed,
    /// for another app or channel than its folder, not signed by a threshold of the trust
    /// root's `release` keys, or vouching past the root's expiry.
    public static let mediaRefused = Self(base: .mediaRefused)

    /// The sysexits status: 65 for bad or rejected data, 66 missing input, 73 cannot create,
    /// 64 usage, 69 a sign command unavailable, 70 internal.
    public func kind(underlying: (any Error & Sendable)?) -> FailureKind {
        switch base {
        case .malformedJSON, .invalidManifest, .invalidSignature, .untrustedKey, .invalidKey,
            .untrustedRoot, .rootExpired, .thresholdNotMet, .restrictionRefused, .mediaRefused:
            return .dataError
        case .crypto, .internalError: return .software
        case .alreadyExists, .io: return .cannotCreate
        case .notFound: return .noInput
        case .invalidArgument: return .usage
        case .signerUnavailable: return .unavailable
        }
    }
}

extension SignedManifestErrorCode: FieldReportingCode {}

import ClientFoundation

/// An error of ReleaseSigning's own steps: key files, signers and sign commands, and the
/// drafts of manifests, roots, restrictions and media indexes.
///
/// What SignedManifest's rules refuse while a draft is signed (a root that does not chain,
/// a media index it does not accept) stays SignedManifest's `SignedManifestError`; the
/// codes here have the same names and exit statuses as SignedManifest's codes of the same
/// name, so a command prints and exits as it did before the two modules split.
public typealias ReleaseSigningError = ModuleError<ReleaseSigningErrorCode>

/// The code of ``ReleaseSigningError``: what kind of failure it is. New codes may be added in later versions.
public struct ReleaseSigningErrorCode: ClientctlErrorCode {
    fileprivate enum Base: Hashable, Sendable {
        case invalidManifest, invalidSignature, alreadyExists, io, invalidArgument
        case signerUnavailable, restrictionRefused
    }
    fileprivate let base: Base
    public var description: String { "\(base)" }

    /// A draft that would make a manifest the rules refuse.
    public static let invalidManifest = Self(base: .invalidManifest)
    /// A signer made a signature that does not verify with its key.
    public static let invalidSignature = Self(base: .invalidSignature)
    /// A key file that must not be overwritten exists already.
    public static let alreadyExists = Self(base: .alreadyExists)
    /// A system call on the file system failed (a key file, a sign command's input).
    public static let io = Self(base: .io)
    /// A caller passed a value that cannot be used (no signers, a key a role does not
    /// list, a choosable channel off the grammar, a threshold out of range).
    public static let invalidArgument = Self(base: .invalidArgument)
    /// A `--sign-command` could not be started, failed, was killed, or ran over its time
    /// limit: the signing service (HSM, KMS, token) is unavailable.
    public static let signerUnavailable = Self(base: .signerUnavailable)
    /// A restriction draft asks for more than the manifest it restricts.
    public static let restrictionRefused = Self(base: .restrictionRefused)

    /// The sysexits status: 65 for data that would be refused, 73 cannot create, 64 usage,
    /// 69 a sign command unavailable (as SignedManifest's codes of the same name).
    public func kind(underlying: (any Error & Sendable)?) -> FailureKind {
        switch base {
        case .invalidManifest, .invalidSignature, .restrictionRefused: return .dataError
        case .alreadyExists, .io: return .cannotCreate
        case .invalidArgument: return .usage
        case .signerUnavailable: return .unavailable
        }
    }
}

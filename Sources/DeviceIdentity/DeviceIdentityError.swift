import ClientFoundation

/// An error of DeviceIdentity's rules: a device id, a device key or a label that is refused.
///
/// Like `DeviceTargetingError`: an extensible ``DeviceIdentityErrorCode``, a one-line message that names
/// the offending text (quoted, with control characters escaped, cut to 64 characters) and says why, and no
/// underlying cause (the module does no I/O).
public typealias DeviceIdentityError = ModuleError<DeviceIdentityErrorCode>

/// The code of ``DeviceIdentityError``: what kind of failure it is. New codes may be added in later versions.
public struct DeviceIdentityErrorCode: ClientctlErrorCode {
    fileprivate enum Base: Hashable, Sendable {
        case invalidLabel, invalidId, invalidKey
    }
    fileprivate let base: Base
    /// The code's name: `invalidLabel`, `invalidId` or `invalidKey`.
    public var description: String { "\(base)" }

    /// A label key, value or `KEY=VALUE` text that does not follow the label grammar, or one label too many
    /// (see ``DeviceLabels``).
    public static let invalidLabel = Self(base: .invalidLabel)
    /// A text that is not a device id (see ``DeviceID``).
    public static let invalidId = Self(base: .invalidId)
    /// A text that is not a device's public key (see ``DevicePublicKey``).
    public static let invalidKey = Self(base: .invalidKey)

    /// Always ``FailureKind/usage``: a bad label, id or key is bad input from the caller (sysexits 64).
    public func kind(underlying: (any Error & Sendable)?) -> FailureKind {
        switch base {
        case .invalidLabel, .invalidId, .invalidKey: return .usage
        }
    }
}

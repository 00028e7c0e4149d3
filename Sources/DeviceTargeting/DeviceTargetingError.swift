import ClientFoundation
import DeviceIdentity

/// An error of DeviceTargeting's rules: a device label or a target expression that is refused.
///
/// Like `SignedManifestError`: an extensible ``DeviceTargetingErrorCode``, a one-line message that names
/// the offending text (quoted, with control characters escaped, cut to 64 characters) and says why,
/// and no underlying cause (the module does no I/O).
public typealias DeviceTargetingError = ModuleError<DeviceTargetingErrorCode>

/// The code of ``DeviceTargetingError``: what kind of failure it is. New codes may be added in later versions.
public struct DeviceTargetingErrorCode: ClientctlErrorCode {
    fileprivate enum Base: Hashable, Sendable {
        case invalidLabel, invalidTarget
    }
    fileprivate let base: Base
    /// The code's name: `invalidLabel` or `invalidTarget`.
    public var description: String { "\(base)" }

    /// A label key, value or `KEY=VALUE` text that does not follow the label grammar, or one label too many
    /// (see ``DeviceLabels``).
    public static let invalidLabel = Self(base: .invalidLabel)
    /// A target expression that does not follow the target language or exceeds one of its bounds
    /// (see ``TargetExpression``).
    public static let invalidTarget = Self(base: .invalidTarget)

    /// Always ``FailureKind/usage``: a bad label or target is bad input from the caller (sysexits 64).
    public func kind(underlying: (any Error & Sendable)?) -> FailureKind {
        switch base {
        case .invalidLabel, .invalidTarget: return .usage
        }
    }
}

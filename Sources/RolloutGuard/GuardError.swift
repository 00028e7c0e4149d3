import ClientFoundation

/// What the rollout guard itself refuses: a channel folder without a manifest to judge, an
/// answer of the fleet that is not the guard's figures, a halt for a cohort whose narrowed
/// target would exceed a target's bounds. What the modules under it throw
/// (the collector client's, a signer's, the restrictor's, a push's) keeps its own type.
public typealias GuardError = ModuleError<GuardErrorCode>

/// The code of ``GuardError``.
public struct GuardErrorCode: ClientctlErrorCode {
    fileprivate enum Base: Hashable, Sendable {
        case notFound, rejected, tooLarge
    }
    fileprivate let base: Base
    public var description: String { "\(base)" }

    /// The channel has no manifest to judge (exit 66).
    public static let notFound = Self(base: .notFound)
    /// The fleet's answer is not the guard's figures (exit 65).
    public static let rejected = Self(base: .rejected)
    /// The restriction's target, narrowed for one more cohort, would exceed a target's
    /// bounds: nothing is signed (exit 65).
    public static let tooLarge = Self(base: .tooLarge)

    public func kind(underlying: (any Error & Sendable)?) -> FailureKind {
        switch base {
        case .notFound: return .noInput
        case .rejected, .tooLarge: return .dataError
        }
    }
}

import ClientFoundation

/// What the audit trail refuses: a trail that does not verify, a line it cannot read, a file it cannot append to.
public typealias AuditTrailError = ModuleError<AuditTrailErrorCode>

/// The code of ``AuditTrailError``.
public struct AuditTrailErrorCode: ClientctlErrorCode {
    fileprivate enum Base: Hashable, Sendable {
        case invalidArgument, notFound, rejected, io
    }
    fileprivate let base: Base
    public var description: String { "\(base)" }

    /// A value given is not one this module takes (exit 64).
    public static let invalidArgument = Self(base: .invalidArgument)
    /// A file named does not exist (exit 66).
    public static let notFound = Self(base: .notFound)
    /// What was read is not what it must be (exit 65).
    public static let rejected = Self(base: .rejected)
    /// Reading or writing a file failed (exit 73).
    public static let io = Self(base: .io)

    public func kind(underlying: (any Error & Sendable)?) -> FailureKind {
        switch base {
        case .invalidArgument: return .usage
        case .notFound: return .noInput
        case .rejected: return .dataError
        case .io: return .cannotCreate
        }
    }
}

import ClientFoundation

/// What console access refuses: an operators file it cannot read, a name or password it will not store.
public typealias ConsoleAccessError = ModuleError<ConsoleAccessErrorCode>

/// The code of ``ConsoleAccessError``.
public struct ConsoleAccessErrorCode: ClientctlErrorCode {
    fileprivate enum Base: Hashable, Sendable {
        case invalidArgument, notFound, rejected, io, exists, busy
    }
    fileprivate let base: Base
    public var description: String { "\(base)" }

    /// A value given is not one this module takes (exit 64).
    public static let invalidArgument = Self(base: .invalidArgument)
    /// A file named, or an operator named, does not exist (exit 66).
    public static let notFound = Self(base: .notFound)
    /// What was read is not what it must be (exit 65).
    public static let rejected = Self(base: .rejected)
    /// Reading or writing a file failed (exit 73).
    public static let io = Self(base: .io)
    /// An operator of that name is in the file already (exit 73).
    public static let exists = Self(base: .exists)
    /// Another process holds the operators file's lock (exit 75).
    public static let busy = Self(base: .busy)

    public func kind(underlying: (any Error & Sendable)?) -> FailureKind {
        switch base {
        case .invalidArgument: return .usage
        case .notFound: return .noInput
        case .rejected: return .dataError
        case .io, .exists: return .cannotCreate
        case .busy: return .tempFail
        }
    }
}

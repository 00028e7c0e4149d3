import ClientFoundation

/// An error of the collector: a database it cannot open or use, a token file it will not
/// trust, an address it cannot listen on.
public typealias FleetCollectorError = ModuleError<FleetCollectorErrorCode>

/// The code of ``FleetCollectorError``. New codes may be added in later versions.
public struct FleetCollectorErrorCode: ClientctlErrorCode {
    fileprivate enum Base: Hashable, Sendable {
        case badDatabaseURL, cannotOpenDatabase, storeFailed, tokenUnreadable, tokenTooOpen, cannotListen, invalidConfiguration,
            badSignature
    }
    fileprivate let base: Base
    public var description: String { "\(base)" }

    /// A `--database` URL that is neither `sqlite:PATH` nor `postgres://…` (exit 64).
    public static let badDatabaseURL = Self(base: .badDatabaseURL)
    /// The database cannot be opened or its schema created (exit 73).
    public static let cannotOpenDatabase = Self(base: .cannotOpenDatabase)
    /// A query or transaction failed (the store is unavailable: a 503 for a request).
    public static let storeFailed = Self(base: .storeFailed)
    /// The read token file is missing, unreadable or empty (exit 66).
    public static let tokenUnreadable = Self(base: .tokenUnreadable)
    /// The read token file is readable or writable by others than its owner (exit 78).
    public static let tokenTooOpen = Self(base: .tokenTooOpen)
    /// The listen address cannot be bound (exit 69).
    public static let cannotListen = Self(base: .cannotListen)
    /// A limit or option out of range (exit 64).
    public static let invalidConfiguration = Self(base: .invalidConfiguration)
    /// A signed admit list whose signature does not verify (exit 65).
    public static let badSignature = Self(base: .badSignature)

    /// The sysexits kind of each code.
    public func kind(underlying: (any Error & Sendable)?) -> FailureKind {
        switch base {
        case .badDatabaseURL, .invalidConfiguration: return .usage
        case .cannotOpenDatabase: return .cannotCreate
        case .storeFailed, .cannotListen: return .unavailable
        case .tokenUnreadable: return .noInput
        case .tokenTooOpen: return .config
        case .badSignature: return .dataError
        }
    }
}

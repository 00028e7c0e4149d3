import ClientUpdater

/// An error from the local HTTP server behind `clientctl serve`.
public struct ServerError: ClientctlError {
    /// What kind of failure this is. New codes may be added in later versions.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Base: Hashable, Sendable { case invalidConfiguration, noServingFolder, cannotListen }
        fileprivate let base: Base
        public var description: String { "\(base)" }
        /// A configuration value (port, folder, policy) cannot be used.
        public static let invalidConfiguration = Code(base: .invalidConfiguration)
        /// The serving folder to activate is missing or has no usable metadata.
        public static let noServingFolder = Code(base: .noServingFolder)
        /// The server could not bind or run.
        public static let cannotListen = Code(base: .cannotListen)
    }

    public var code: Code
    public var message: String
    public var underlying: (any Error & Sendable)?

    public init(_ code: Code, _ message: String, underlying: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    public var kind: FailureKind {
        switch code.base {
        case .invalidConfiguration: return .usage
        case .noServingFolder: return .noInput
        case .cannotListen: return .unavailable
        }
    }
}

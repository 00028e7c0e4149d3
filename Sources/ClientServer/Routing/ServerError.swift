import ClientFoundation
import ClientUpdater

/// An error from the local HTTP server behind `clientctl serve`.
public typealias ServerError = ModuleError<ServerErrorCode>

/// The code of ``ServerError``: what kind of failure it is. New codes may be added in later versions.
public struct ServerErrorCode: ClientctlErrorCode {
    fileprivate enum Base: Hashable, Sendable { case invalidConfiguration, noServingFolder, cannotListen }
    fileprivate let base: Base
    public var description: String { "\(base)" }
    /// A configuration value (port, folder, policy) cannot be used.
    public static let invalidConfiguration = Self(base: .invalidConfiguration)
    /// The serving folder to activate is missing or has no usable metadata.
    public static let noServingFolder = Self(base: .noServingFolder)
    /// The server could not bind or run.
    public static let cannotListen = Self(base: .cannotListen)

    /// The kind of failure of an error with this code.
    public func kind(underlying: (any Error & Sendable)?) -> FailureKind {
        switch base {
        case .invalidConfiguration: return .usage
        case .noServingFolder: return .noInput
        case .cannotListen: return .unavailable
        }
    }
}

import ClientUpdater

/// An error from the serving core: a folder it cannot serve.
package typealias ServingError = ModuleError<ServingErrorCode>

/// The code of ``ServingError``. New codes may be added later.
package struct ServingErrorCode: ClientctlErrorCode {
    fileprivate enum Base: Hashable, Sendable { case invalidConfiguration, noServingFolder }
    fileprivate let base: Base
    package var description: String { "\(base)" }
    /// A folder given to serve from (the Meteor `www` folder) cannot be used.
    package static let invalidConfiguration = Self(base: .invalidConfiguration)
    /// The serving folder to activate is missing or has no usable metadata.
    package static let noServingFolder = Self(base: .noServingFolder)

    /// The kind of failure of an error with this code.
    package func kind(underlying: (any Error & Sendable)?) -> FailureKind {
        switch base {
        case .invalidConfiguration: return .usage
        case .noServingFolder: return .noInput
        }
    }
}

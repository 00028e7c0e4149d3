import ClientFoundation
import ClientUpdater
import Foundation

/// An error from the serving core: a folder it cannot serve, a file it cannot read.
package typealias ServingError = ModuleError<ServingErrorCode>

/// The code of ``ServingError``. New codes may be added later.
package struct ServingErrorCode: ClientctlErrorCode {
    fileprivate enum Base: Hashable, Sendable { case invalidConfiguration, noServingFolder, io }
    fileprivate let base: Base
    package var description: String { "\(base)" }
    /// A folder given to serve from (the Meteor `www` folder) cannot be used.
    package static let invalidConfiguration = Self(base: .invalidConfiguration)
    /// The serving folder to activate is missing or has no usable metadata.
    package static let noServingFolder = Self(base: .noServingFolder)
    /// A system call on a served file failed (open, stat, seek, read).
    package static let io = Self(base: .io)

    /// The kind of failure of an error with this code.
    package func kind(underlying: (any Error & Sendable)?) -> FailureKind {
        switch base {
        case .invalidConfiguration: return .usage
        case .noServingFolder: return .noInput
        case .io: return .cannotCreate
        }
    }
}

extension ServingError {
    /// An I/O error from a failed system call, with `errno` decoded (the message and cause
    /// `UpdaterError.io` gives).
    static func io(_ what: String, path: String, errno code: Int32) -> ServingError {
        ServingError(.io, "\(what) \(path): \(String(cString: strerror(code)))", underlying: POSIXErrorBox(code: code))
    }
}

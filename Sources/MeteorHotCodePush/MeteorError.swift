import ClientUpdater
import Foundation

/// An error of the Meteor hot-code-push channel.
///
/// Messages keep the wording of the original Cordova plugin where it had one
/// ("Hash mismatch for asset: /app/x.js", "Skipping downloading blacklisted version", …)
/// so people who know the plugin recognise them.
public struct MeteorError: ClientctlError {
    /// What kind of failure this is. New codes may be added in later versions.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Base: Hashable, Sendable {
            case invalidManifest, unsafePath, tooLarge, httpStatus, hashMismatch
            case runtimeConfig, network, io, embeddedInvalid, invalidArgument, versionMismatch
        }
        fileprivate let base: Base
        public var description: String { "\(base)" }

        /// `manifest.json` / `program.json` is malformed or incompatible.
        public static let invalidManifest = Code(base: .invalidManifest)
        /// A manifest `url`, `path` or `version` would resolve outside its folder.
        public static let unsafePath = Code(base: .unsafePath)
        /// A manifest or asset is larger than allowed.
        public static let tooLarge = Code(base: .tooLarge)
        /// The server answered an asset or manifest request with a non-2xx status.
        public static let httpStatus = Code(base: .httpStatus)
        /// Downloaded bytes do not match the manifest hash (ETag or local SHA-1).
        public static let hashMismatch = Code(base: .hashMismatch)
        /// The downloaded index.html's runtime config is missing or fails a check.
        public static let runtimeConfig = Code(base: .runtimeConfig)
        /// The downloaded index.html belongs to another version than the manifest (the
        /// server is between two versions): nothing is staged or blacklisted; try later.
        public static let versionMismatch = Code(base: .versionMismatch)
        /// The network failed after retries.
        public static let network = Code(base: .network)
        /// A file-system operation failed.
        public static let io = Code(base: .io)
        /// The embedded (initial) bundle is missing or invalid.
        public static let embeddedInvalid = Code(base: .embeddedInvalid)
        /// A caller passed a value that cannot be used.
        public static let invalidArgument = Code(base: .invalidArgument)
    }

    /// What kind of failure.
    public var code: Code
    /// One line: what failed and why.
    public var message: String
    /// The lower-level error, when there is one.
    public var underlying: (any Error & Sendable)?

    public init(_ code: Code, _ message: String, underlying: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    public var kind: FailureKind {
        switch code.base {
        case .invalidManifest, .unsafePath, .tooLarge, .httpStatus, .hashMismatch, .runtimeConfig: return .dataError
        case .network: return .unavailable
        case .versionMismatch: return .tempFail
        case .io: return .cannotCreate
        case .embeddedInvalid: return .config
        case .invalidArgument: return .usage
        }
    }
}

extension MeteorError: FieldReportingError {
    public static var invalidArgumentCode: Code { .invalidArgument }
}

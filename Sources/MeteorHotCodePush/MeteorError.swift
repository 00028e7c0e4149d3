import ClientFoundation
import ClientUpdater
import Foundation

/// An error of the Meteor hot-code-push channel.
///
/// Messages keep the wording of the original Cordova plugin where it had one
/// ("Hash mismatch for asset: /app/x.js", "Skipping downloading blacklisted version", …)
/// so people who know the plugin recognise them.
public typealias MeteorError = ModuleError<MeteorErrorCode>

/// The code of ``MeteorError``: what kind of failure it is. New codes may be added in later versions.
public struct MeteorErrorCode: ClientctlErrorCode {
    fileprivate enum Base: Hashable, Sendable {
        case invalidManifest, unsafePath, tooLarge, httpStatus, hashMismatch
        case runtimeConfig, network, io, embeddedInvalid, invalidArgument, versionMismatch, configInvalid
    }
    fileprivate let base: Base
    public var description: String { "\(base)" }

    /// `manifest.json` / `program.json` is malformed or incompatible.
    public static let invalidManifest = Self(base: .invalidManifest)
    /// A manifest `url`, `path` or `version` would resolve outside its folder.
    public static let unsafePath = Self(base: .unsafePath)
    /// A manifest or asset is larger than allowed.
    public static let tooLarge = Self(base: .tooLarge)
    /// The server answered an asset or manifest request with a non-2xx status.
    public static let httpStatus = Self(base: .httpStatus)
    /// Downloaded bytes do not match the manifest hash (ETag or local SHA-1).
    public static let hashMismatch = Self(base: .hashMismatch)
    /// The downloaded index.html's runtime config is missing or fails a check.
    public static let runtimeConfig = Self(base: .runtimeConfig)
    /// The downloaded index.html belongs to another version than the manifest (the
    /// server is between two versions): nothing is staged or blacklisted; try later.
    public static let versionMismatch = Self(base: .versionMismatch)
    /// The network failed after retries.
    public static let network = Self(base: .network)
    /// A file-system operation failed.
    public static let io = Self(base: .io)
    /// The embedded (initial) bundle is missing or invalid.
    public static let embeddedInvalid = Self(base: .embeddedInvalid)
    /// A caller passed a value that cannot be used.
    public static let invalidArgument = Self(base: .invalidArgument)
    /// The root's `config.json` is not a Meteor root's (another channel kind, or no
    /// `meteorRootURL` or `embeddedPath`).
    public static let configInvalid = Self(base: .configInvalid)

    /// The kind of failure of an error with this code.
    public func kind(underlying: (any Error & Sendable)?) -> FailureKind {
        switch base {
        case .invalidManifest, .unsafePath, .tooLarge, .httpStatus, .hashMismatch, .runtimeConfig: return .dataError
        case .network: return .unavailable
        case .versionMismatch: return .tempFail
        case .io: return .cannotCreate
        case .embeddedInvalid, .configInvalid: return .config
        case .invalidArgument: return .usage
        }
    }
}

extension MeteorErrorCode: FieldReportingCode {}

/// An asset's refused status is `.httpStatus` with an `HTTPStatusFailure` as its cause, so
/// the downloader's retry loop reads it (`TransportFailing`) and retries a 5xx.
extension MeteorErrorCode: TransportFailureCode {}

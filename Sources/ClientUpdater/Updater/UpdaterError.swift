import ClientFoundation
import Foundation

/// An error from the channel-agnostic core: store, state, lock, transport, selection.
///
/// Modelled on swift-nio's `FileSystemError`: an extensible `Code`, a human message,
/// and the underlying cause when there is one.
public typealias UpdaterError = ModuleError<UpdaterErrorCode>

/// The code of ``UpdaterError``: what kind of failure it is. New codes may be added in later versions.
public struct UpdaterErrorCode: ClientctlErrorCode {
    fileprivate enum Base: Hashable, Sendable {
        case invalidArgument, notFound, alreadyExists, io, corruptState, configInvalid
        case locked, network, httpStatus, tooLarge, hashMismatch, rejected, unsupported, internalError, conflict
        case noSpace
    }
    fileprivate let base: Base
    public var description: String { "\(base)" }

    /// A caller passed a value that cannot be used.
    public static let invalidArgument = Self(base: .invalidArgument)
    /// A file, folder or version that was expected is missing.
    public static let notFound = Self(base: .notFound)
    /// Something that must not be overwritten exists already.
    public static let alreadyExists = Self(base: .alreadyExists)
    /// A system call on the file system failed.
    public static let io = Self(base: .io)
    /// `state.json` or a sidecar could not be read as expected.
    public static let corruptState = Self(base: .corruptState)
    /// `config.json` is missing or invalid.
    public static let configInvalid = Self(base: .configInvalid)
    /// Another process holds the root's lock.
    public static let locked = Self(base: .locked)
    /// A connection failed (refused, reset, timed out) after retries.
    public static let network = Self(base: .network)
    /// A server answered with a status that is not success.
    public static let httpStatus = Self(base: .httpStatus)
    /// A body or file was larger than allowed.
    public static let tooLarge = Self(base: .tooLarge)
    /// Downloaded bytes do not match the expected digest.
    public static let hashMismatch = Self(base: .hashMismatch)
    /// Input was valid in form but refused by policy.
    public static let rejected = Self(base: .rejected)
    /// A feature or scheme that is not supported.
    public static let unsupported = Self(base: .unsupported)
    /// A request about another version than the one it concerns (an acknowledgement
    /// from a page of a version that is not on trial): refused, nothing changed.
    public static let conflict = Self(base: .conflict)
    /// The file system is full (`ENOSPC`), or a download cannot fit in its free space:
    /// what was written for it is removed, nothing is kept to resume.
    public static let noSpace = Self(base: .noSpace)
    /// An unexpected failure: a bug.
    public static let internalError = Self(base: .internalError)

    /// The kind of failure of an error with this code.
    public func kind(underlying: (any Error & Sendable)?) -> FailureKind {
        switch base {
        case .invalidArgument: return .usage
        case .notFound: return .noInput
        case .alreadyExists, .io, .noSpace: return .cannotCreate
        case .corruptState, .configInvalid: return .config
        case .locked: return .tempFail
        case .network: return .unavailable
        case .httpStatus:
            // A status retried in vain (5xx, 408, 429) is an unavailable server, like a
            // network failure; any other is a refusal of what the feed names.
            return (underlying as? HTTPStatusFailure)?.isTransient == true ? .unavailable : .dataError
        case .tooLarge, .hashMismatch, .rejected, .conflict: return .dataError
        case .unsupported: return .dataError
        case .internalError: return .software
        }
    }
}

extension UpdaterError {
    /// An I/O error from a failed system call, with `errno` decoded.
    public static func io(_ what: String, path: String, errno code: Int32) -> UpdaterError {
        UpdaterError(.io, "\(what) \(path): \(String(cString: strerror(code)))", underlying: POSIXErrorBox(code: code))
    }
}

extension UpdaterErrorCode: FieldReportingCode {}

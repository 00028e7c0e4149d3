import ClientFoundation

/// An error the engine decides itself: no root named, a folder that is not a root, a
/// config naming no channel it knows, a packaged app's template it cannot use.
///
/// What the engine's parts throw keeps their own type (ClientUpdater's `UpdaterError` for a
/// root's files and lock, a channel's own error for its check); a host reads any of them
/// as `ClientctlError` and acts on its `kind`.
public typealias EngineError = ModuleError<EngineErrorCode>

/// The code of ``EngineError``: what kind of failure it is. New codes may be added in later versions.
public struct EngineErrorCode: ClientctlErrorCode {
    fileprivate enum Base: Hashable, Sendable {
        case invalidArgument, configInvalid, deviceKey
    }
    fileprivate let base: Base
    public var description: String { "\(base)" }

    /// A caller passed a value that cannot be used (no root named).
    public static let invalidArgument = Self(base: .invalidArgument)
    /// A root that does not exist, is of another app or channel kind than its template,
    /// or whose config names an unknown channel kind; a template that cannot be used
    /// where there is no root to fall back on.
    public static let configInvalid = Self(base: .configInvalid)

    /// The root's device key cannot be made, read or used (`device-key.pem`).
    public static let deviceKey = Self(base: .deviceKey)

    /// The sysexits status: 64 usage, 78 config (as `UpdaterError`'s codes of the same name),
    /// 73 a device key that cannot be made or used.
    public func kind(underlying: (any Error & Sendable)?) -> FailureKind {
        switch base {
        case .invalidArgument: return .usage
        case .configInvalid: return .config
        case .deviceKey: return .cannotCreate
        }
    }
}

extension EngineErrorCode: FieldReportingCode {}

import ClientFoundation

/// An error of a device's setup: a `config.json`, a device template or a root's setup
/// request that cannot be used.
///
/// ClientUpdater reads a root's config through its own `DeviceConfig.load(_:)`, which says
/// the same as an `UpdaterError`; a host reads either as `ClientctlError`.
public typealias DeviceSetupError = ModuleError<DeviceSetupErrorCode>

/// The code of ``DeviceSetupError``: what kind of failure it is. New codes may be added in later versions.
public struct DeviceSetupErrorCode: ClientctlErrorCode {
    fileprivate enum Base: Hashable, Sendable {
        case invalidArgument, notFound, configInvalid
    }
    fileprivate let base: Base
    public var description: String { "\(base)" }

    /// A caller passed a value that cannot be used (a setting out of range, a setup field).
    public static let invalidArgument = Self(base: .invalidArgument)
    /// A file the setup names is missing (a template, a trusted key, a seed).
    public static let notFound = Self(base: .notFound)
    /// `config.json` or a device template is missing or invalid.
    public static let configInvalid = Self(base: .configInvalid)

    /// The sysexits status: 64 usage, 66 no input, 78 config (as `UpdaterError`'s codes of
    /// the same name).
    public func kind(underlying: (any Error & Sendable)?) -> FailureKind {
        switch base {
        case .invalidArgument: return .usage
        case .notFound: return .noInput
        case .configInvalid: return .config
        }
    }
}

extension DeviceSetupErrorCode: FieldReportingCode {}

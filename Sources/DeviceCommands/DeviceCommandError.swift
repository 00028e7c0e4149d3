import ClientFoundation
import CommandSupport

/// An error the device commands decide themselves: flags of `init` that do not go together
/// or that name a file it cannot use. What the modules under a command throw keeps its own
/// type; `runReportingErrors(_:)` prints any `ClientctlError` as one line and exits with its
/// kind's status.
typealias DeviceCommandError = ModuleError<DeviceCommandErrorCode>

/// The code of ``DeviceCommandError``.
struct DeviceCommandErrorCode: ClientctlErrorCode {
    fileprivate enum Base: Hashable, Sendable {
        case invalidArgument, rejected
    }
    fileprivate let base: Base
    var description: String { "\(base)" }

    /// Flags that cannot be used, or not together (exit 64).
    static let invalidArgument = Self(base: .invalidArgument)
    /// An input a flag names that is refused as data, such as a `--ca-file` without a usable
    /// certificate (exit 65).
    static let rejected = Self(base: .rejected)

    func kind(underlying: (any Error & Sendable)?) -> FailureKind {
        switch base {
        case .invalidArgument: return .usage
        case .rejected: return .dataError
        }
    }
}

extension DeviceCommandErrorCode: FieldReportingCode {}

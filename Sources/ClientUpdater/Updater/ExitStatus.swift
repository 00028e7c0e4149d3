/// Process exit statuses, following BSD `sysexits(3)`.
///
/// Every clientctl error maps to exactly one of these, so scripts can tell a bad
/// release (65) from a network outage (69) from a busy device (75).
public enum ExitStatus: Int32, Sendable, CaseIterable {
    /// Success.
    case ok = 0
    /// The command was used incorrectly (bad flag, missing argument).
    case usage = 64
    /// Input data was invalid or rejected: bad signature, hostile archive, malformed JSON.
    case dataError = 65
    /// An input file or folder does not exist or cannot be read.
    case noInput = 66
    /// A service is unavailable: the network failed after retries.
    case unavailable = 69
    /// An internal error: a bug or an unexpected failure of a library.
    case software = 70
    /// An output file cannot be created (exists already, disk full, permissions).
    case cannotCreate = 73
    /// A temporary failure: the root is locked by another clientctl; retry later.
    case tempFail = 75
    /// The configuration is missing or invalid.
    case config = 78
}

/// Implemented by the error type of every clientctl module, so the command line can
/// print one line and exit with the right status whatever module failed.
public protocol ClientctlError: Error, CustomStringConvertible {
    /// The one-line message shown to users: what failed and why.
    var message: String { get }
    /// The process exit status this error maps to.
    var exitStatus: ExitStatus { get }
}

extension ClientctlError {
    public var description: String { message }
}

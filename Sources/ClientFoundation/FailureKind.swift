/// What kind of failure an error is, in the terms a caller acts on: fix the input, retry
/// later, report a bug. The command line maps each kind to one `sysexits(3)` status (its
/// `ExitCodes.swift`); the libraries know no process exit codes.
public enum FailureKind: Sendable, CaseIterable {
    /// The caller used the API or command incorrectly (bad flag, missing argument).
    case usage
    /// Input data was invalid or rejected: bad signature, hostile archive, malformed JSON.
    case dataError
    /// An input file or folder does not exist or cannot be read.
    case noInput
    /// A service is unavailable: the network failed after retries.
    case unavailable
    /// An internal error: a bug or an unexpected failure of a library.
    case software
    /// An output file cannot be created (exists already, disk full, permissions).
    case cannotCreate
    /// A temporary failure: the root is busy (locked, or an agent runs on it); retry later.
    case tempFail
    /// Not permitted: a well-formed request that what the device trusts does not allow
    /// (a channel its trust root does not let it choose).
    case notPermitted
    /// The configuration is missing or invalid.
    case config
}

/// Implemented by the error type of every clientctl module, so a caller (the command
/// line, a host app) can show one line and act on the kind whatever module failed.
public protocol ClientctlError: Error, CustomStringConvertible {
    /// The one-line message shown to users: what failed and why.
    var message: String { get }
    /// What kind of failure this is.
    var kind: FailureKind { get }
    /// The lower-level cause, when there is one (a ``FieldProblem`` for a bad field).
    var underlying: (any Error & Sendable)? { get }
}

extension ClientctlError {
    public var description: String { message }
}

extension FailureKind {
    /// The BSD `sysexits(3)` status of a process that failed this way: the one table of
    /// `clientctl` and `clientctl-shell` (docs/reference/exit-codes.md, checked against this by
    /// Scripts/doc-examples).
    package var exitStatus: Int32 {
        switch self {
        case .usage: return 64  // EX_USAGE
        case .dataError: return 65  // EX_DATAERR
        case .noInput: return 66  // EX_NOINPUT
        case .unavailable: return 69  // EX_UNAVAILABLE
        case .software: return 70  // EX_SOFTWARE
        case .cannotCreate: return 73  // EX_CANTCREAT
        case .tempFail: return 75  // EX_TEMPFAIL
        case .notPermitted: return 77  // EX_NOPERM
        case .config: return 78  // EX_CONFIG
        }
    }
}

/// The code of one module's errors: what kind of failure it is, in that module's terms.
///
/// Each module declares one code type (a struct over a private enum, so later versions can
/// add codes without breaking a caller's `switch`) and says which ``FailureKind`` each code
/// is; ``ModuleError`` carries it with a message and a cause.
public protocol ClientctlErrorCode: Hashable, Sendable, CustomStringConvertible {
    /// The kind of failure of an error with this code and this underlying cause.
    func kind(underlying: (any Error & Sendable)?) -> FailureKind
}

/// The one error shape of every clientctl module: an extensible ``code``, a one-line
/// ``message`` that names what failed and why, and the ``underlying`` cause when there is
/// one (the shape of swift-nio's `FileSystemError`).
///
/// A module names its error with a type alias, such as
/// `public typealias UpdaterError = ModuleError<UpdaterErrorCode>`, so callers catch
/// `UpdaterError` and compare `error.code == .locked`.
public struct ModuleError<ErrorCode: ClientctlErrorCode>: ClientctlError {
    /// The module's code type (`UpdaterError.Code` is `UpdaterErrorCode`).
    public typealias Code = ErrorCode

    /// What kind of failure this is.
    public var code: Code
    /// The one-line message shown to users: what failed and why.
    public var message: String
    /// The lower-level cause, when there is one.
    public var underlying: (any Error & Sendable)?

    /// Creates an error.
    public init(_ code: Code, _ message: String, underlying: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    /// What kind of failure this is, as the code says.
    public var kind: FailureKind { code.kind(underlying: underlying) }
}

/// A `errno` value kept as the underlying cause of an error from a failed system call.
public struct POSIXErrorBox: Error, Sendable, Equatable {
    /// The `errno` value.
    public let code: Int32

    /// Wraps an `errno` value.
    public init(code: Int32) {
        self.code = code
    }
}

import Foundation

/// The code of ``FileSystemError``.
public struct FileSystemErrorCode: ClientctlErrorCode {
    fileprivate enum Base: Hashable, Sendable { case io }
    fileprivate let base: Base
    /// The code's name.
    public var description: String { "\(base)" }

    /// A system call on the file system failed; the underlying cause is its `errno`.
    public static let io = Self(base: .io)

    /// File-system failures are outputs that cannot be created (sysexits 73).
    public func kind(underlying: (any Error & Sendable)?) -> FailureKind { .cannotCreate }
}

/// An error of the foundation's file primitives (``AtomicFile``, ``Digest`` of a file).
public typealias FileSystemError = ModuleError<FileSystemErrorCode>

extension ModuleError where Code == FileSystemErrorCode {
    /// An I/O error from a failed system call, with `errno` decoded.
    public static func io(_ what: String, path: String, errno code: Int32) -> FileSystemError {
        FileSystemError(.io, "\(what) \(path): \(String(cString: strerror(code)))", underlying: POSIXErrorBox(code: code))
    }
}

extension Error {
    /// The `errno` of a failed system call this error carries, if any: the underlying cause
    /// of a clientctl error, a `POSIXError`, or an `NSError` of the POSIX domain.
    public var posixCode: Int32? {
        if let error = self as? any ClientctlError, let box = error.underlying as? POSIXErrorBox { return box.code }
        if let posix = self as? POSIXError { return posix.code.rawValue }
        let ns = self as NSError
        return ns.domain == NSPOSIXErrorDomain ? Int32(ns.code) : nil
    }
}

import ClientFoundation

/// An error from making or applying a delta patch.
///
/// Like the other modules' errors: an extensible ``Code``, a one-line message that names
/// what failed and why, and the underlying cause when there is one.
public struct DeltaError: ClientctlError {
    /// What kind of failure this is. New codes may be added in later versions.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Base: Hashable, Sendable {
            case malformedPatch, windowTooLarge, outputTooLarge, outputMismatch, baseMismatch, io, compressor
        }
        fileprivate let base: Base
        public var description: String { "\(base)" }

        /// Not one complete zstd frame of the kind publish writes (bad magic, a dictionary
        /// id, no content size, trailing bytes, corrupt blocks, a failed checksum).
        public static let malformedPatch = Code(base: .malformedPatch)
        /// The frame asks for a window larger than the cap: refused before allocation.
        public static let windowTooLarge = Code(base: .windowTooLarge)
        /// The frame declares or produces more bytes than the signed size.
        public static let outputTooLarge = Code(base: .outputTooLarge)
        /// The patched bytes do not hash to the signed value.
        public static let outputMismatch = Code(base: .outputMismatch)
        /// The base is not the one the patch was made against (hash or size).
        public static let baseMismatch = Code(base: .baseMismatch)
        /// Reading or writing a file failed.
        public static let io = Code(base: .io)
        /// libzstd refused to make a patch (publishing side).
        public static let compressor = Code(base: .compressor)
    }

    /// What kind of failure this is.
    public var code: Code
    /// The one-line message shown to users.
    public var message: String
    /// The underlying cause, when there is one.
    public var underlying: (any Error & Sendable)?

    /// Creates an error.
    public init(_ code: Code, _ message: String, underlying: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    /// The sysexits status: 65 for a bad patch, 73 for file-system failures, 70 when
    /// libzstd fails on publish.
    public var kind: FailureKind {
        switch code.base {
        case .malformedPatch, .windowTooLarge, .outputTooLarge, .outputMismatch, .baseMismatch: return .dataError
        case .io: return .cannotCreate
        case .compressor: return .software
        }
    }
}

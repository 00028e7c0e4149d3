import ClientFoundation

/// An error from making or applying a delta patch.
///
/// Like the other modules' errors: an extensible ``DeltaErrorCode``, a one-line message that names
/// what failed and why, and the underlying cause when there is one.
public typealias DeltaError = ModuleError<DeltaErrorCode>

/// The code of ``DeltaError``: what kind of failure it is. New codes may be added in later versions.
public struct DeltaErrorCode: ClientctlErrorCode {
    fileprivate enum Base: Hashable, Sendable {
        case malformedPatch, windowTooLarge, outputTooLarge, outputMismatch, baseMismatch, io, compressor
    }
    fileprivate let base: Base
    public var description: String { "\(base)" }

    /// Not one complete zstd frame of the kind publish writes (bad magic, a dictionary
    /// id, no content size, trailing bytes, corrupt blocks, a failed checksum).
    public static let malformedPatch = Self(base: .malformedPatch)
    /// The frame asks for a window larger than the cap: refused before allocation.
    public static let windowTooLarge = Self(base: .windowTooLarge)
    /// The frame declares or produces more bytes than the signed size.
    public static let outputTooLarge = Self(base: .outputTooLarge)
    /// The patched bytes do not hash to the signed value.
    public static let outputMismatch = Self(base: .outputMismatch)
    /// The base is not the one the patch was made against (hash or size).
    public static let baseMismatch = Self(base: .baseMismatch)
    /// Reading or writing a file failed.
    public static let io = Self(base: .io)
    /// libzstd refused to make a patch (publishing side).
    public static let compressor = Self(base: .compressor)

    /// The sysexits status: 65 for a bad patch, 73 for file-system failures, 70 when
    /// libzstd fails on publish.
    public func kind(underlying: (any Error & Sendable)?) -> FailureKind {
        switch base {
        case .malformedPatch, .windowTooLarge, .outputTooLarge, .outputMismatch, .baseMismatch: return .dataError
        case .io: return .cannotCreate
        case .compressor: return .software
        }
    }
}

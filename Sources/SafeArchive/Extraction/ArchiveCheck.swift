import ClientFoundation
import Foundation

/// The outcome of checking archive bytes against an expected `size` and `sha256` (a
/// manifest's `size` and `sha256`, as the device checks a download).
public enum ArchiveCheck: Sendable, Equatable {
    /// Length and SHA-256 match.
    case matches
    /// The archive has `actual` bytes, the manifest says `expected`.
    case sizeMismatch(expected: Int64, actual: Int64)
    /// The archive's SHA-256 is `actual`, the manifest says `expected`.
    case hashMismatch(expected: String, actual: String)

    /// Checks the file at `path` against `size` bytes and the lower-case hex SHA-256
    /// `sha256` (size first, then the hash, read in chunks).
    public static func check(fileAt path: String, size: Int64, sha256: String) throws -> ArchiveCheck {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw SafeArchiveError(.notFound, "cannot open archive \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        return try check(descriptor: fd, path: path, size: size, sha256: sha256)
    }

    /// Checks what is readable from `fd` (from its current offset) against `size` and `sha256`.
    public static func check(descriptor fd: Int32, path: String, size: Int64, sha256: String) throws -> ArchiveCheck {
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw SafeArchiveError(.io, "cannot stat \(path): \(String(cString: strerror(errno)))") }
        let remaining = Int64(st.st_size) - Int64(lseek(fd, 0, SEEK_CUR))
        guard remaining == size else { return .sizeMismatch(expected: size, actual: remaining) }
        let actual = try Digest.hex(.sha256, ofDescriptor: fd, path: path)
        guard actual == sha256 else { return .hashMismatch(expected: sha256, actual: actual) }
        return .matches
    }

    /// A one-line description (`size 10 bytes, manifest says 12`), `nil` when it matches.
    public var failureMessage: String? {
        switch self {
        case .matches: return nil
        case .sizeMismatch(let e, let a): return "archive is \(a) bytes, the manifest says \(e)"
        case .hashMismatch(let e, let a): return "archive SHA-256 is \(a), the manifest says \(e)"
        }
    }
}

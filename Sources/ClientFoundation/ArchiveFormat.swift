/// The archive formats a release may use (docs/formats.md#archive-formats). libarchive reads and writes all three.
public enum ArchiveFormat: String, Sendable, CaseIterable, CustomStringConvertible {
    /// POSIX tar (pax) compressed with gzip: the default.
    case tarGzip = "tar.gz"
    /// Zip with deflate.
    case zip = "zip"
    /// POSIX tar (pax) compressed with Zstandard.
    case tarZstd = "tar.zst"

    /// The file name extension without a leading dot (`tar.gz`).
    public var fileExtension: String { rawValue }

    public var description: String { rawValue }

    /// The format a file name ends with (`v1.0.0.tar.gz` → `.tarGzip`), if any.
    public init?(fileName: String) {
        guard let match = Self.allCases.first(where: { fileName.hasSuffix("." + $0.rawValue) }) else { return nil }
        self = match
    }
}

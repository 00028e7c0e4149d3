/// Caps applied while unpacking an archive; a policy the caller chooses.
///
/// Every cap is checked while streaming, against what is actually decompressed and
/// written (sizes declared in headers are only used to refuse early).
public struct ExtractionLimits: Sendable, Equatable {
    /// Most bytes of file data written in total (default 2 GiB).
    public var maxTotalBytes: UInt64
    /// Most entries (files and directories) in the archive (default 50,000).
    public var maxEntries: Int
    /// Most decompressed bytes per compressed byte read (default 200). Checked once more
    /// than ``ratioGraceBytes`` have been decompressed. DEFLATE reaches about 1032:1 on
    /// zeros; real web clients stay far below 50:1. Compressed bytes are counted as read
    /// from the file, 256 KiB at a time, so the check is lenient by up to one read.
    public var maxCompressionRatio: UInt64
    /// Decompressed bytes allowed before the ratio is enforced (default 16 MiB), so small
    /// archives of empty files are not refused.
    public var ratioGraceBytes: UInt64
    /// Most bytes in a whole entry path (default 1024).
    public var maxPathBytes: Int
    /// Most bytes in one path component (default 255, the usual `NAME_MAX`).
    public var maxComponentBytes: Int
    /// Most components in a path, so most nested folders plus one (default 32).
    public var maxDepth: Int

    /// Creates limits; every argument defaults to the value documented on its property.
    public init(
        maxTotalBytes: UInt64 = 2 << 30,
        maxEntries: Int = 50_000,
        maxCompressionRatio: UInt64 = 200,
        ratioGraceBytes: UInt64 = 16 << 20,
        maxPathBytes: Int = 1024,
        maxComponentBytes: Int = 255,
        maxDepth: Int = 32
    ) {
        self.maxTotalBytes = maxTotalBytes
        self.maxEntries = maxEntries
        self.maxCompressionRatio = maxCompressionRatio
        self.ratioGraceBytes = ratioGraceBytes
        self.maxPathBytes = maxPathBytes
        self.maxComponentBytes = maxComponentBytes
        self.maxDepth = maxDepth
    }

    /// The documented defaults.
    public static let `default` = ExtractionLimits()

    /// The entry rule for names under these limits.
    package var entryRule: EntryRule {
        EntryRule(maxPathBytes: maxPathBytes, maxComponentBytes: maxComponentBytes, maxDepth: maxDepth)
    }

    /// Most decompressed bytes the tar stream may hold: file data plus 4 KiB of headers and
    /// padding per entry plus 1 MiB, so the bytes after the last entry are bounded too.
    var maxStreamBytes: UInt64 {
        maxTotalBytes &+ UInt64(max(maxEntries, 0)) &* 4096 &+ (1 << 20)
    }
}

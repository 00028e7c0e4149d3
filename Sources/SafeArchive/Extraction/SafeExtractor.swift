internal import CArchive
import ClientFoundation
import Foundation

/// What a successful extraction produced.
public struct ExtractionReport: Sendable, Equatable {
    /// The kind of archive that was read (`nil` for a tree tar, which has no compression).
    public var format: ArchiveFormat?
    /// The staging folder now holding the tree (complete and synced).
    public var staging: String
    /// Regular files written.
    public var files: Int
    /// Folders created, explicit or implied by a file's path (the staging root excluded).
    public var directories: Int
    /// Bytes of file data written.
    public var bytesWritten: UInt64
    /// Bytes of the archive file read.
    public var archiveBytes: UInt64
}

/// Unpacks a verified archive (tar.gz, tar.zst or zip) into a fresh staging folder,
/// applying the entry rule and caps of docs/threat-model.md (#the-entry-rule, #caps) while streaming.
///
/// - Reads from an already-open descriptor (the one whose SHA-256 was checked), with
///   `pread` from offset 0; the path is never reopened.
/// - libarchive is set up with only the tar and zip readers and the gzip and zstd
///   filters; one compression layer exactly (none for zip).
/// - Each entry is decided from its header before anything is written: regular files and
///   folders only, names per the entry rule, no duplicates, no file/folder conflicts.
///   Files are written 0644 and folders 0755 with `openat`/`mkdirat` relative to the
///   staging folder (`O_CREAT | O_EXCL | O_NOFOLLOW`); owners, modes, xattrs and ACLs in
///   the archive are ignored. `archive_write_disk` is not used.
/// - Bytes actually written, entries and the compression ratio are capped while streaming.
///   Any libarchive warning or retry is a failure; the archive is read to its end.
/// - gzip: libarchive never checks the trailer, so the CRC-32 and length of the whole
///   decompressed stream are compared with the file's last 8 bytes. A gzip of several
///   members or with bytes after its member fails this check and is refused.
/// - `index.html` must be a regular file at the root. Everything is made durable at the
///   end with one `syncfs` of the staging folder's file system plus an `fsync` of the
///   staging folder; the caller renames it into place and fsyncs the parent.
/// - Names are decoded with a UTF-8 `LC_CTYPE` set for the calling thread only
///   (`uselocale`), so pax and zip UTF-8 names work whatever the process locale.
///
/// On any failure the staging folder is removed and a ``SafeArchiveError`` is thrown
/// whose one-line message names the entry and the reason:
/// `archive entry "<name>" rejected: <reason>` or `archive rejected: <reason>` for a refused
/// archive (codes `archiveRejected`, `archiveLimit`, `archiveFailed`; exit status 65), and
/// `cannot unpack archive entry "<name>": <reason>` or `cannot unpack archive: <reason>`
/// for a local failure (codes `io`, `alreadyExists`: 73; `internalError`: 70). Names are
/// quoted with `"`, `\\`, control characters and bytes that are not UTF-8 escaped. The
/// extractor only reports; the caller decides what to do.
public struct SafeExtractor: Sendable {
    /// The caps applied.
    public var limits: ExtractionLimits

    /// Creates an extractor with the given caps.
    public init(limits: ExtractionLimits = .default) {
        self.limits = limits
    }

    /// Extracts the archive open on `fileDescriptor` into `staging`, which must not exist
    /// (its parent must). On failure `staging` does not exist afterwards (unless it existed
    /// before, which is refused with `alreadyExists` and leaves it alone).
    public func extract(fileDescriptor: Int32, into staging: String) throws(SafeArchiveError) -> ExtractionReport {
        try inUTF8Locale(fileDescriptor: fileDescriptor, into: staging, treeTar: false)
    }

    /// Extracts the uncompressed tar open on `fileDescriptor` (the tree tar a delta patch
    /// rebuilt, docs/delta-updates.md) into `staging` under the same entry rule and caps as
    /// an archive; any compression layer is refused.
    public func extractTreeTar(fileDescriptor: Int32, into staging: String) throws(SafeArchiveError) -> ExtractionReport {
        try inUTF8Locale(fileDescriptor: fileDescriptor, into: staging, treeTar: true)
    }

    /// Entry names are decoded as UTF-8 whatever the process locale (this thread only).
    private func inUTF8Locale(fileDescriptor: Int32, into staging: String, treeTar: Bool) throws(SafeArchiveError) -> ExtractionReport {
        let utf8 = clientctl_utf8_locale()
        let previous = utf8.flatMap { clientctl_use_locale($0) }
        defer {
            if let utf8 {
                _ = clientctl_use_locale(previous)
                clientctl_free_locale(utf8)
            }
        }
        do {
            return try extractOrExplain(fileDescriptor: fileDescriptor, into: staging, treeTar: treeTar)
        } catch {
            throw error.safeArchiveError
        }
    }

    private func extractOrExplain(fileDescriptor: Int32, into staging: String, treeTar: Bool) throws(ExtractionError) -> ExtractionReport {
        var info = stat()
        guard fstat(fileDescriptor, &info) == 0 else {
            throw StagingWriter.ioError("cannot read archive descriptor", errno)
        }
        guard info.st_mode & S_IFMT == S_IFREG else { throw ExtractionError(.unsupported, "archive is not a regular file") }
        let source = FileSource(fd: fileDescriptor, size: UInt64(info.st_size))
        let format: ArchiveFormat? = treeTar ? nil : try Self.sniff(source)
        let writer = try StagingWriter(creating: staging)
        do {
            var run = ExtractionRun(limits: limits, writer: writer)
            switch format {
            case .zip: try run.extractZip(source)
            case .tarGzip, .tarZstd, nil: try run.extractTar(source, format: format)
            }
            try run.requireIndex()
            try writer.finish()
            return ExtractionReport(
                format: format, staging: staging, files: run.files, directories: run.directories,
                bytesWritten: run.bytesWritten, archiveBytes: source.size)
        } catch {
            writer.discard()
            throw error
        }
    }

    /// Tells the format from the first bytes: gzip, zstd or a zip local header / end record.
    static func sniff(_ source: FileSource) throws(ExtractionError) -> ArchiveFormat {
        guard let magic = source.bytes(at: 0, count: 6), !magic.isEmpty else {
            throw ExtractionError(.empty, "archive file is empty")
        }
        if magic.starts(with: [0x1F, 0x8B]) { return .tarGzip }
        if magic.starts(with: [0x28, 0xB5, 0x2F, 0xFD]) { return .tarZstd }
        if magic.starts(with: [0x50, 0x4B, 0x03, 0x04]) || magic.starts(with: [0x50, 0x4B, 0x05, 0x06]) { return .zip }
        if let nested = compressionName(magic) {
            throw ExtractionError(.unsupported, "\(nested) compression is not supported (expected tar.gz, tar.zst or zip)")
        }
        throw ExtractionError(.unsupported, "not a tar.gz, tar.zst or zip archive")
    }

    /// The name of a compression format recognised from its magic bytes, if any.
    static func compressionName(_ magic: [UInt8]) -> String? {
        let known: [([UInt8], String)] = [
            ([0x1F, 0x8B], "gzip"), ([0x28, 0xB5, 0x2F, 0xFD], "zstd"), ([0x42, 0x5A, 0x68], "bzip2"),
            ([0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00], "xz"), ([0x04, 0x22, 0x4D, 0x18], "lz4"), ([0x1F, 0x9D], "compress"),
            ([0x5D, 0x00, 0x00], "lzma"),
        ]
        return known.first { magic.starts(with: $0.0) }?.1
    }
}

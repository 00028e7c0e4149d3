internal import CArchive
import ClientFoundation
import Foundation

/// Writes a ``SourceTree`` as a reproducible archive through libarchive.
///
/// The same tree always gives the same bytes: entries in ``SourceTree/entries`` order
/// (sorted by name), every mtime ``fixedModificationTime``, uid/gid 0 with empty user and
/// group names, modes 0755 for folders and executables and 0644 for other files, no
/// access/change times, and a gzip header without timestamp or file name. Tar archives are
/// POSIX pax (restricted: extended headers only for long or non-ASCII names); names are
/// stored as UTF-8. Zip entries carry a DOS time that libarchive derives from the fixed
/// mtime in the local time zone: `clientctl publish` runs in UTC so zips are
/// byte-identical everywhere.
public enum ArchiveWriter {
    /// 2000-01-01T00:00:00Z, the mtime of every entry.
    public static let fixedModificationTime: Int = 946_684_800

    /// Writes `tree` in `format` to a new file at `path` (refuses to overwrite) and fsyncs it.
    /// - Throws: ``SafeArchiveError``: `.alreadyExists`, `.io`, `.archiveFailed` (with
    ///   libarchive's message), `.sourceRejected` when a file changed while being read.
    public static func write(_ tree: SourceTree, format: ArchiveFormat, to path: String) throws {
        try writeNewFile(path, kind: .archive(format), tree: tree, sync: true)
    }

    /// Writes `tree` to an open descriptor; `path` only names it in errors.
    public static func write(_ tree: SourceTree, format: ArchiveFormat, descriptor fd: Int32, path: String) throws {
        try write(tree, kind: .archive(format), descriptor: fd, path: path)
    }

    /// Writes the canonical tree tar of `tree` to a new file at `path` (refuses to
    /// overwrite), not synced (a tree tar is a work file, rebuilt after a crash): an
    /// uncompressed POSIX pax tar of the same entries, every
    /// file 0644 and every folder 0755 (the modes a device's extraction gives, so a device
    /// rebuilds the same bytes from an installed version). Delta patches go from one
    /// release's tree tar to the next (docs/delta-updates.md#tree-tar).
    public static func writeTreeTar(_ tree: SourceTree, to path: String) throws {
        try writeNewFile(path, kind: .treeTar, tree: tree, sync: false)
    }

    /// Creates `path` (never overwriting), writes `tree` into it, fsyncs it when asked, and
    /// removes it on any failure.
    private static func writeNewFile(_ path: String, kind: Kind, tree: SourceTree, sync: Bool) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            let code: SafeArchiveError.Code = errno == EEXIST ? .alreadyExists : .io
            throw SafeArchiveError(code, "cannot create \(path): \(String(cString: strerror(errno)))")
        }
        var ok = false
        defer {
            close(fd)
            if !ok { unlink(path) }
        }
        try write(tree, kind: kind, descriptor: fd, path: path)
        if sync, fsync(fd) != 0 { throw SafeArchiveError(.io, "cannot fsync \(path): \(String(cString: strerror(errno)))") }
        ok = true
    }

    /// What a write produces: a published archive, or a canonical tree tar.
    enum Kind {
        case archive(ArchiveFormat)
        case treeTar
    }

    static func write(_ tree: SourceTree, kind: Kind, descriptor fd: Int32, path: String) throws {
        // libarchive converts names through the current locale's character set; under the C
        // locale non-ASCII names fail (and crash its pax writer). Use a UTF-8 locale for this
        // thread only, for the whole synchronous write, and restore the previous one.
        let utf8Locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", nil)
        let previousLocale = utf8Locale.flatMap { uselocale($0) }
        defer {
            if let previousLocale { uselocale(previousLocale) }
            if let utf8Locale { freelocale(utf8Locale) }
        }
        if utf8Locale == nil, let name = tree.entries.first(where: { !$0.path.utf8.allSatisfy { $0 < 0x80 } }) {
            throw SafeArchiveError(.sourceRejected, "\(tree.root)/\(name.path): non-ASCII names need the C.UTF-8 locale, which is not available")
        }
        let writer = try Handle(kind: kind, path: path)
        guard archive_write_open_fd(writer.pointer, fd) == ARCHIVE_OK else { throw writer.failure("cannot open \(path) for writing") }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
        defer { buffer.deallocate() }
        for item in tree.entries {
            try writer.add(item, root: tree.root, buffer: buffer, executableBits: writer.keepsExecutableBits)
        }
        guard archive_write_close(writer.pointer) == ARCHIVE_OK else { throw writer.failure("cannot finish \(path)") }
    }

    /// Owns a libarchive writer; freed when the last reference goes (end of ``write``).
    private final class Handle {
        let pointer: OpaquePointer
        let path: String
        /// False for a tree tar: every file is 0644 there, as on devices.
        let keepsExecutableBits: Bool

        init(kind: Kind, path: String) throws {
            guard let a = archive_write_new() else { throw SafeArchiveError(.archiveFailed, "cannot allocate a libarchive writer") }
            pointer = a
            self.path = path
            let format: ArchiveFormat
            switch kind {
            case .archive(let f):
                format = f
                keepsExecutableBits = true
            case .treeTar:
                keepsExecutableBits = false
                guard archive_write_set_format_pax_restricted(a) == ARCHIVE_OK, archive_write_add_filter_none(a) == ARCHIVE_OK else {
                    throw failure("libarchive cannot write a plain tar")
                }
                return
            }
            let status: Int32
            switch format {
            case .tarGzip:
                status =
                    archive_write_set_format_pax_restricted(a) | archive_write_add_filter_gzip(a)
                    | archive_write_set_filter_option(a, "gzip", "timestamp", nil)
            case .tarZstd:
                status = archive_write_set_format_pax_restricted(a) | archive_write_add_filter_zstd(a)
            case .zip:
                status = archive_write_set_format_zip(a) | archive_write_set_format_option(a, "zip", "compression", "deflate")
            }
            // ARCHIVE_OK is 0 and every failure is negative, so OR-ing keeps any failure visible.
            guard status == ARCHIVE_OK else { throw failure("libarchive cannot write \(format)") }
            if format == .zip {
                guard archive_write_set_format_option(a, "zip", "hdrcharset", "UTF-8") == ARCHIVE_OK else {
                    throw failure("libarchive cannot store UTF-8 names in zip")
                }
            }
        }

        deinit { archive_write_free(pointer) }

        func failure(_ what: String) -> SafeArchiveError {
            let detail = archive_error_string(pointer).map { String(cString: $0) } ?? ""
            return SafeArchiveError(.archiveFailed, detail.isEmpty ? what : "\(what): \(detail)")
        }

        func add(_ item: SourceTree.Entry, root: String, buffer: UnsafeMutableRawBufferPointer, executableBits: Bool) throws {
            guard let entry = archive_entry_new() else { throw SafeArchiveError(.archiveFailed, "cannot allocate an archive entry") }
            defer { archive_entry_free(entry) }
            archive_entry_set_pathname_utf8(entry, item.archiveName)
            archive_entry_set_filetype(entry, item.isDirectory ? clientctl_ae_ifdir() : clientctl_ae_ifreg())
            archive_entry_set_perm(entry, item.isDirectory || (executableBits && item.isExecutable) ? 0o755 : 0o644)
            archive_entry_set_size(entry, item.isDirectory ? 0 : item.size)
            archive_entry_set_mtime(entry, time_t(ArchiveWriter.fixedModificationTime), 0)
            archive_entry_set_uid(entry, 0)
            archive_entry_set_gid(entry, 0)
            let name = "\(root)/\(item.path)"
            guard archive_write_header(pointer, entry) == ARCHIVE_OK else { throw failure("cannot add \(name) to \(path)") }
            if !item.isDirectory { try copyData(of: name, expected: item.size, buffer: buffer) }
            guard archive_write_finish_entry(pointer) == ARCHIVE_OK else { throw failure("cannot add \(name) to \(path)") }
        }

        func copyData(of name: String, expected: Int64, buffer: UnsafeMutableRawBufferPointer) throws {
            // O_NONBLOCK: a file swapped for a FIFO after the scan must not hang publish
            // (holding the channel lock); anything but a regular file is refused here.
            let fd = open(name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
            guard fd >= 0 else {
                throw SafeArchiveError(.sourceRejected, "\(name): unreadable file: \(String(cString: strerror(errno)))")
            }
            defer { close(fd) }
            var st = stat()
            guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG else {
                throw SafeArchiveError(.sourceRejected, "\(name) is no longer a regular file: only regular files are published; publish again")
            }
            var total: Int64 = 0
            while true {
                let n = read(fd, buffer.baseAddress, buffer.count)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw SafeArchiveError(.sourceRejected, "\(name): read failed: \(String(cString: strerror(errno)))")
                }
                if n == 0 { break }
                total += Int64(n)
                guard total <= expected else { break }
                guard archive_write_data(pointer, buffer.baseAddress, n) == n else { throw failure("cannot write \(name) into \(path)") }
            }
            guard total == expected else {
                throw SafeArchiveError(.sourceRejected, "\(name) changed while it was being archived (\(expected) bytes expected); publish again")
            }
        }
    }
}

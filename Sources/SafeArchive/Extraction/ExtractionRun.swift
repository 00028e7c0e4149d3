internal import CArchive
import ClientFoundation
import Foundation

/// One extraction in progress: the libarchive readers, the entry bookkeeping and counters.
struct ExtractionRun {
    let limits: ExtractionLimits
    let writer: StagingWriter
    private var tree = EntryTree()
    private(set) var entries = 0
    private(set) var files = 0
    private(set) var bytesWritten: UInt64 = 0
    var directories: Int { tree.kinds.values.filter { $0 != .file }.count }

    init(limits: ExtractionLimits, writer: StagingWriter) {
        self.limits = limits
        self.writer = writer
    }

    // MARK: tar.gz / tar.zst

    /// Two libarchive readers: the outer one (raw format, gzip and zstd filters) yields the
    /// decompressed stream, which ``DecompressedStream`` checks and hands to the inner one
    /// (tar format, no filter).
    /// - Parameter format: `nil` for an uncompressed tree tar (no compression layer allowed).
    mutating func extractTar(_ source: FileSource, format: ArchiveFormat?) throws(ExtractionError) {
        let outer = try ArchiveHandle()
        if let format {
            let filterSetup =
                format == .tarGzip
                ? archive_read_support_filter_gzip(outer.pointer)
                : archive_read_support_filter_zstd(outer.pointer)
            guard filterSetup == ARCHIVE_OK else {
                throw ExtractionError(.unsupported, "this libarchive cannot decompress \(format.rawValue) itself")
            }
        }
        // Both filters are enabled so that one layer inside another is recognised and refused.
        _ = archive_read_support_filter_gzip(outer.pointer)
        _ = archive_read_support_filter_zstd(outer.pointer)
        archive_read_support_format_raw(outer.pointer)
        source.attach(to: outer, seekable: false)
        guard archive_read_open1(outer.pointer) == ARCHIVE_OK else { throw corrupt(outer, source) }
        let layers = (0..<archive_filter_count(outer.pointer)).compactMap { index -> String? in
            archive_filter_code(outer.pointer, index) == ARCHIVE_FILTER_NONE
                ? nil
                : archive_filter_name(outer.pointer, index).map { String(cString: $0) }
        }
        guard layers.count == (format == nil ? 0 : 1) else {
            if format == nil {
                throw ExtractionError(.unsupported, "a tree tar is not compressed, this one is \(layers.joined(separator: " inside "))")
            }
            throw ExtractionError(.unsupported, "nested compression (\(layers.joined(separator: " inside ")))")
        }
        var rawEntry: OpaquePointer?
        guard archive_read_next_header(outer.pointer, &rawEntry) == ARCHIVE_OK else { throw corrupt(outer, source) }

        let stream = DecompressedStream(outer: outer, source: source, limits: limits)
        let inner = try ArchiveHandle()
        archive_read_support_format_tar(inner.pointer)
        stream.attach(to: inner)
        guard archive_read_open1(inner.pointer) == ARCHIVE_OK else {
            if let failure = stream.failure { throw failure }
            if stream.produced == 0 { throw ExtractionError(.empty, "archive has no entries") }
            let layer = layers.first ?? "tree tar"
            if let nested = SafeExtractor.compressionName(Array(stream.head.prefix(6))) {
                throw ExtractionError(.unsupported, "nested compression (\(nested) inside \(layer))")
            }
            throw ExtractionError(.corrupt, layers.isEmpty ? "not a tar archive" : "not a tar archive inside the \(layer) stream")
        }
        try extractEntries(inner, stream: stream, source: source, zipNames: nil)
        try stream.drain()
        var rawEnd: OpaquePointer?
        guard archive_read_next_header(outer.pointer, &rawEnd) == ARCHIVE_EOF else { throw corrupt(outer, source) }
        guard stream.endsWithTarTrailer else {
            throw ExtractionError(.corrupt, "truncated tar archive: no end-of-archive marker")
        }
        if format == .tarGzip { try checkGzipTrailer(source, stream) }
    }

    private func checkGzipTrailer(_ source: FileSource, _ stream: DecompressedStream) throws(ExtractionError) {
        guard source.size >= 18, let trailer = source.bytes(at: source.size - 8, count: 8), trailer.count == 8 else {
            throw ExtractionError(.corrupt, "gzip trailer missing")
        }
        let crc = trailer[0..<4].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let length = trailer[4..<8].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        guard crc == stream.crc.value else {
            throw ExtractionError(.corrupt, String(format: "gzip CRC-32 mismatch: trailer says %08x, data has %08x", crc, stream.crc.value))
        }
        guard length == UInt32(truncatingIfNeeded: stream.produced) else {
            throw ExtractionError(.corrupt, "gzip length mismatch: trailer says \(length), data has \(UInt32(truncatingIfNeeded: stream.produced))")
        }
    }

    // MARK: zip

    /// One libarchive reader (seekable zip format, no filter), after ``ZipDirectory`` checked
    /// the central directory against the local headers.
    mutating func extractZip(_ source: FileSource) throws(ExtractionError) {
        let directory = try ZipDirectory.read(source, limits: limits)
        let archive = try ArchiveHandle()
        archive_read_support_format_zip_seekable(archive.pointer)
        source.attach(to: archive, seekable: true)
        guard archive_read_open1(archive.pointer) == ARCHIVE_OK else { throw corrupt(archive, source) }
        let names = Set(directory.entries.map(\.name))
        try extractEntries(archive, stream: nil, source: source, zipNames: names)
        guard entries == directory.entries.count else {
            throw ExtractionError(.corrupt, "zip holds \(entries) entries but its central directory lists \(directory.entries.count)")
        }
    }

    // MARK: entries

    private mutating func extractEntries(
        _ archive: ArchiveHandle, stream: DecompressedStream?, source: FileSource,
        zipNames: Set<[UInt8]>?
    ) throws(ExtractionError) {
        let rule = limits.entryRule
        while true {
            var entryPointer: OpaquePointer?
            stream?.currentEntry = nil
            let status = archive_read_next_header(archive.pointer, &entryPointer)
            if status == ARCHIVE_EOF { break }
            guard status == ARCHIVE_OK, let entry = entryPointer else {
                if let failure = stream?.failure { throw failure }
                throw corrupt(archive, source, name: entryPointer.flatMap(rawName))
            }
            guard let name = rawName(entry) else { throw ExtractionError(.entryRejected, "entry without a name") }
            stream?.currentEntry = name
            entries += 1
            guard entries <= limits.maxEntries else {
                throw ExtractionError(.limitExceeded, entryName: name, "more than \(limits.maxEntries) entries")
            }
            if let zipNames, !zipNames.contains(name) {
                throw ExtractionError(.corrupt, entryName: name, "zip entry is not in the central directory")
            }
            if let refusal = typeRefusal(entry) { throw ExtractionError(.entryRejected, entryName: name, refusal) }
            let isDirectory = archive_entry_filetype(entry) == clientctl_ae_ifdir()
            let components: [String]
            switch rule.check(name, isDirectory: isDirectory) {
            case .rejected(let reason): throw ExtractionError(.entryRejected, entryName: name, reason)
            case .accepted(let parts): components = parts
            }
            if components.isEmpty { continue }  // "./": the staging folder itself
            if let conflict = tree.add(components, isDirectory: isDirectory) {
                throw ExtractionError(.entryRejected, entryName: name, conflict)
            }
            if isDirectory {
                try writer.makeDirectory(components, entry: name)
            } else {
                try writeFile(archive, entry: entry, name: name, components: components, stream: stream, source: source)
            }
            try FaultPoint.hit("unpack.entry") { code in
                StagingWriter.ioError(isDirectory ? "cannot create folder" : "cannot write file", code, name)
            }
        }
    }

    private func typeRefusal(_ entry: OpaquePointer) -> String? {
        if archive_entry_hardlink(entry) != nil { return "hard link" }
        if archive_entry_symlink(entry) != nil { return "symbolic link" }
        switch archive_entry_filetype(entry) {
        case clientctl_ae_ifreg():
            if archive_entry_sparse_count(entry) > 0 { return "sparse file" }
            if archive_entry_is_encrypted(entry) != 0 { return "encrypted entry" }
            return nil
        case clientctl_ae_ifdir(): return nil
        case clientctl_ae_iflnk(): return "symbolic link"
        case clientctl_ae_ifchr(): return "character device"
        case clientctl_ae_ifblk(): return "block device"
        case clientctl_ae_ififo(): return "fifo"
        case clientctl_ae_ifsock(): return "socket"
        default: return "unsupported entry type"
        }
    }

    private mutating func writeFile(
        _ archive: ArchiveHandle, entry: OpaquePointer, name: [UInt8], components: [String],
        stream: DecompressedStream?, source: FileSource
    ) throws(ExtractionError) {
        let cap = limits.maxTotalBytes
        if archive_entry_size_is_set(entry) != 0, UInt64(max(archive_entry_size(entry), 0)) > cap - bytesWritten {
            throw ExtractionError(.limitExceeded, entryName: name, "file data beyond the cap of \(cap) bytes in total")
        }
        let fd = try writer.createFile(components, entry: name)
        defer { close(fd) }
        files += 1
        var written: Int64 = 0
        while true {
            var block: UnsafeRawPointer?
            var size = 0
            var offset: Int64 = 0
            let status = archive_read_data_block(archive.pointer, &block, &size, &offset)
            if status == ARCHIVE_EOF { break }
            guard status == ARCHIVE_OK else {
                if let failure = stream?.failure { throw failure }
                throw corrupt(archive, source, name: name)
            }
            guard offset == written else { throw ExtractionError(.entryRejected, entryName: name, "sparse file") }
            guard UInt64(size) <= cap - bytesWritten else {
                throw ExtractionError(.limitExceeded, entryName: name, "file data beyond the cap of \(cap) bytes in total")
            }
            if stream == nil, bytesWritten + UInt64(size) > limits.ratioGraceBytes,
                (bytesWritten + UInt64(size)) / max(limits.maxCompressionRatio, 1) > source.consumed
            {
                throw ExtractionError(.limitExceeded, entryName: name, "compression ratio above \(limits.maxCompressionRatio):1")
            }
            do {
                try AtomicFile.writeAll(fd: fd, bytes: UnsafeRawBufferPointer(start: block, count: size), path: "")
            } catch {
                let code = error.posixCode ?? EIO
                throw StagingWriter.ioError("cannot write file", code, name)
            }
            written += Int64(size)
            bytesWritten += UInt64(size)
        }
    }

    /// Refuses a tree without `index.html` as a regular file at its root.
    func requireIndex() throws(ExtractionError) {
        if entries == 0 { throw ExtractionError(.empty, "archive has no entries") }
        guard tree.kind(of: "index.html") == .file else {
            throw ExtractionError(.missingIndex, "no index.html file at the archive root")
        }
    }

    private func corrupt(_ archive: ArchiveHandle, _ source: FileSource, name: [UInt8]? = nil) -> ExtractionError {
        let reason = source.failure.map { "cannot read archive: \(String(cString: strerror($0)))" } ?? archive.errorText
        if let name { return ExtractionError(.corrupt, entryName: name, reason) }
        return ExtractionError(.corrupt, reason)
    }
}

/// The raw bytes of an entry's name as libarchive reports it.
private func rawName(_ entry: OpaquePointer) -> [UInt8]? {
    guard let pointer = archive_entry_pathname(entry) else { return nil }
    return Array(UnsafeBufferPointer(start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self), count: strlen(pointer)))
}

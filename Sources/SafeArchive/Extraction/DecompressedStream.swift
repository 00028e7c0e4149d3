internal import CArchive
import Foundation

/// The decompressed bytes of a tar.gz or tar.zst, read from the outer libarchive handle
/// (raw format + one decompression filter) and fed to the inner tar reader.
///
/// Everything that libarchive does not check about the stream happens here, once per
/// byte and in one pass: the CRC-32 and length for the gzip trailer, the cap on
/// decompressed bytes and on the compression ratio, the tar end-of-archive marker, and
/// raw tar headers whose names hide a NUL byte (``TarHeaderObserver``).
final class DecompressedStream {
    private let outer: ArchiveHandle
    private let source: FileSource
    private let limits: ExtractionLimits
    private let buffer = UnsafeMutableRawPointer.allocate(byteCount: extractionBufferSize, alignment: 16)
    private var observer = TarHeaderObserver()

    /// Decompressed bytes produced so far.
    private(set) var produced: UInt64 = 0
    /// CRC-32 of the decompressed bytes so far.
    private(set) var crc = CRC32()
    /// The first bytes of the stream (to name nested compression).
    private(set) var head: [UInt8] = []
    /// The last 1024 bytes of the stream (the tar end-of-archive marker).
    private(set) var tail: [UInt8] = []
    /// The first failure seen here; it explains why the tar reader then failed.
    private(set) var failure: ExtractionError?
    /// The raw name of the entry being extracted, so that a cap names it.
    var currentEntry: [UInt8]?

    init(outer: ArchiveHandle, source: FileSource, limits: ExtractionLimits) {
        self.outer = outer
        self.source = source
        self.limits = limits
    }

    deinit { buffer.deallocate() }

    /// Fills `out` with the next decompressed bytes: a count, 0 at the end, -1 on failure.
    func read(_ out: UnsafeMutablePointer<UnsafeRawPointer?>) -> Int {
        if failure != nil { return -1 }
        let n = archive_read_data(outer.pointer, buffer, extractionBufferSize)
        if n < 0 {
            fail(ExtractionError(.corrupt, outer.errorText))
            return -1
        }
        if n == 0 { return 0 }
        let chunk = UnsafeRawBufferPointer(start: buffer, count: n)
        if let error = account(chunk) {
            fail(error)
            return -1
        }
        out.pointee = UnsafeRawPointer(buffer)
        return n
    }

    /// Reads whatever follows the tar end-of-archive marker, through the same checks.
    func drain() throws(ExtractionError) {
        var pointer: UnsafeRawPointer?
        while true {
            let n = read(&pointer)
            if n == 0 { return }
            if n < 0 { throw failure ?? ExtractionError(.corrupt, outer.errorText) }
        }
    }

    private func fail(_ error: ExtractionError) {
        if failure == nil { failure = error }
    }

    private func account(_ chunk: UnsafeRawBufferPointer) -> ExtractionError? {
        produced += UInt64(chunk.count)
        crc.update(chunk)
        if head.count < 16 { head += chunk.prefix(16 - head.count) }
        if chunk.count >= 1024 {
            tail = Array(chunk.suffix(1024))
        } else {
            tail = Array((tail + chunk).suffix(1024))
        }
        if produced > limits.maxStreamBytes {
            return limitError("decompressed data beyond the cap of \(limits.maxStreamBytes) bytes")
        }
        if produced > limits.ratioGraceBytes, produced / max(limits.maxCompressionRatio, 1) > source.consumed {
            return limitError("compression ratio above \(limits.maxCompressionRatio):1")
        }
        if let (name, reason) = observer.feed(chunk) {
            return ExtractionError(.entryRejected, entryName: name, reason)
        }
        return nil
    }

    private func limitError(_ reason: String) -> ExtractionError {
        if let currentEntry { return ExtractionError(.limitExceeded, entryName: currentEntry, reason) }
        return ExtractionError(.limitExceeded, reason)
    }

    /// Installs this stream as the read callback of the inner tar reader.
    func attach(to archive: ArchiveHandle) {
        let a = archive.pointer
        archive_read_set_callback_data(a, Unmanaged.passUnretained(self).toOpaque())
        archive_read_set_read_callback(a) { _, data, out in
            guard let data, let out else { return -1 }
            return Unmanaged<DecompressedStream>.fromOpaque(data).takeUnretainedValue().read(out)
        }
    }

    /// Whether the stream ends with the two zero blocks of a tar end-of-archive marker.
    var endsWithTarTrailer: Bool { tail.count == 1024 && tail.allSatisfy { $0 == 0 } }
}

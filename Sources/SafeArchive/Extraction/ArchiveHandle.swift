internal import CArchive
import Foundation

/// Size of the buffers handed to libarchive: extraction memory does not grow with the archive.
let extractionBufferSize = 256 * 1024

/// Owns a libarchive read handle; frees it on deinit. Confined to one extraction call.
final class ArchiveHandle {
    let pointer: OpaquePointer

    init() throws(ExtractionError) {
        guard let pointer = archive_read_new() else {
            throw ExtractionError(.internalError, "libarchive could not allocate a reader")
        }
        self.pointer = pointer
    }

    deinit { archive_read_free(pointer) }

    /// libarchive's last error text, or a fallback when it has none.
    var errorText: String {
        if let text = archive_error_string(pointer), text.pointee != 0 { return String(cString: text) }
        return "libarchive failed without a message"
    }
}

/// Reads the verified archive file with `pread` from offset 0, so the descriptor's own
/// offset is neither used nor changed, and counts the compressed bytes consumed.
final class FileSource {
    let fd: Int32
    let size: UInt64
    private(set) var offset: Int64 = 0
    /// Compressed bytes read so far (for the ratio cap).
    private(set) var consumed: UInt64 = 0
    /// The `errno` of a failed read, if any.
    private(set) var failure: Int32?
    private let buffer = UnsafeMutableRawPointer.allocate(byteCount: extractionBufferSize, alignment: 16)

    init(fd: Int32, size: UInt64) {
        self.fd = fd
        self.size = size
    }

    deinit { buffer.deallocate() }

    /// Reads exactly `count` bytes at `at`, or fewer at end of file.
    func bytes(at position: UInt64, count: Int) -> [UInt8]? {
        guard position <= size, count >= 0 else { return [] }
        var out = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = out.withUnsafeMutableBytes { pread(fd, $0.baseAddress?.advanced(by: done), count - done, off_t(position) + off_t(done)) }
            if n < 0 {
                if errno == EINTR { continue }
                failure = errno
                return nil
            }
            if n == 0 { break }
            done += n
        }
        return Array(out.prefix(done))
    }

    func read(_ out: UnsafeMutablePointer<UnsafeRawPointer?>) -> Int {
        while true {
            let n = pread(fd, buffer, extractionBufferSize, off_t(offset))
            if n < 0 {
                if errno == EINTR { continue }
                failure = errno
                return -1
            }
            offset += Int64(n)
            consumed += UInt64(n)
            out.pointee = UnsafeRawPointer(buffer)
            return n
        }
    }

    func seek(_ request: Int64, whence: Int32) -> Int64 {
        let base: Int64
        switch whence {
        case SEEK_SET: base = 0
        case SEEK_CUR: base = offset
        case SEEK_END: base = Int64(size)
        default: return Int64(ARCHIVE_FATAL)
        }
        let (target, overflow) = base.addingReportingOverflow(request)
        guard !overflow, target >= 0 else { return Int64(ARCHIVE_FATAL) }
        offset = target
        return target
    }

    /// Installs this source as the read (and optionally seek) callbacks of `archive`.
    func attach(to archive: ArchiveHandle, seekable: Bool) {
        let a = archive.pointer
        archive_read_set_callback_data(a, Unmanaged.passUnretained(self).toOpaque())
        archive_read_set_read_callback(a) { _, data, out in
            guard let data, let out else { return -1 }
            return Unmanaged<FileSource>.fromOpaque(data).takeUnretainedValue().read(out)
        }
        if seekable {
            archive_read_set_seek_callback(a) { _, data, request, whence in
                guard let data else { return Int64(ARCHIVE_FATAL) }
                return Unmanaged<FileSource>.fromOpaque(data).takeUnretainedValue().seek(request, whence: whence)
            }
        }
    }
}

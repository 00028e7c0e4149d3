import ClientFoundation
import ClientUpdater
import Foundation
import NIOCore

/// Opens and reads served files without trusting what lies in `serving/`: never through a
/// symlink (`O_NOFOLLOW`), never blocking on a FIFO or device (`O_NONBLOCK`, then only a
/// regular file is accepted), and always on the shared ``BlockingExecutor``, never on Swift's
/// cooperative pool, so a slow disk cannot stall the control endpoints.
package enum SafeFileReader {
    /// A file that is not (or no longer) the regular file the version listed.
    struct Refusal: Error, CustomStringConvertible {
        let path: String
        let reason: String
        var description: String { "refusing to serve \(path): \(reason)" }
    }

    /// Runs blocking file work off the cooperative pool, on the executor every blocking
    /// call of the device side shares (bounded: a burst of requests queues there).
    static func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await BlockingExecutor.run(work)
    }

    /// Opens `path` read-only if it is a regular file of `expectedSize` bytes; the caller closes.
    static func open(_ path: String, expectedSize: Int64) throws -> Int32 {
        let fd = Glibc.open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            throw code == ELOOP
                ? Refusal(path: path, reason: "it is a symbolic link")
                : ServingError.io("cannot open", path: path, errno: code)
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            throw ServingError.io("cannot stat", path: path, errno: code)
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw Refusal(path: path, reason: "it is not a regular file")
        }
        guard Int64(info.st_size) == expectedSize else {
            close(fd)
            throw Refusal(path: path, reason: "it changed size on disk (\(info.st_size) bytes, \(expectedSize) expected)")
        }
        return fd
    }

    /// Reads a whole small file into one buffer.
    static func readWhole(_ path: String, expectedSize: Int64) async throws -> ByteBuffer {
        try await offPool {
            let fd = try open(path, expectedSize: expectedSize)
            defer { close(fd) }
            return try read(fd, path: path, offset: 0, count: Int(expectedSize))
        }
    }

    /// Reads `count` bytes at `offset` (short only at end of file).
    static func read(_ fd: Int32, path: String, offset: Int64, count: Int) throws -> ByteBuffer {
        var buffer = ByteBufferAllocator().buffer(capacity: count)
        var position = offset
        while buffer.readableBytes < count {
            var failure: Int32 = 0
            let wanted = count - buffer.readableBytes
            let n = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: wanted) { raw -> Int in
                let r = pread(fd, raw.baseAddress, min(raw.count, wanted), off_t(position))
                if r < 0 {
                    failure = errno
                    return 0
                }
                return r
            }
            if failure == EINTR { continue }
            if failure != 0 { throw ServingError.io("cannot read", path: path, errno: failure) }
            if n == 0 { break }
            position += Int64(n)
        }
        return buffer
    }

    /// SHA-256 entity tag of a large file, read through the same checks.
    static func etag(_ path: String, expectedSize: Int64) async throws -> String {
        try await offPool {
            let fd = try open(path, expectedSize: expectedSize)
            defer { close(fd) }
            let digest = Digest(.sha256)
            var offset: Int64 = 0
            while offset < expectedSize {
                let chunk = try read(fd, path: path, offset: offset, count: Int(min(1 << 20, expectedSize - offset)))
                if chunk.readableBytes == 0 { break }
                chunk.withUnsafeReadableBytes { digest.update($0) }
                offset += Int64(chunk.readableBytes)
            }
            return "\"" + digest.finalizeHex() + "\""
        }
    }

    /// A response body streaming `range` of the file in 256 KiB chunks, each read off the pool.
    /// `onClose` runs once the stream has closed its file.
    package static func body(
        _ path: String, expectedSize: Int64, range: ClosedRange<Int64>, onClose: (@Sendable () -> Void)? = nil
    ) async throws -> ResponseBodyStream {
        let fd = try await offPool { try open(path, expectedSize: expectedSize) }
        return ResponseBodyStream(fd: fd, path: path, range: range, onClose: onClose)
    }
}

/// An open, checked file descriptor and the bytes of it to send; closes itself when done.
package final class ResponseBodyStream: Sendable {
    let fd: Int32
    let path: String
    let range: ClosedRange<Int64>
    let onClose: (@Sendable () -> Void)?

    init(fd: Int32, path: String, range: ClosedRange<Int64>, onClose: (@Sendable () -> Void)? = nil) {
        self.fd = fd
        self.path = path
        self.range = range
        self.onClose = onClose
    }

    deinit {
        close(fd)
        onClose?()
    }

    /// The next chunk at `offset`, or nil at the end of the range.
    package func chunk(at offset: Int64) async throws -> ByteBuffer? {
        guard offset <= range.upperBound else { return nil }
        let count = Int(min(256 << 10, range.upperBound - offset + 1))
        let buffer = try await SafeFileReader.offPool { [self] in try SafeFileReader.read(fd, path: path, offset: offset, count: count) }
        return buffer.readableBytes == 0 ? nil : buffer
    }
}

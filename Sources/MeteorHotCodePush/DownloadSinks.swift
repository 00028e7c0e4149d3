import ClientUpdater
import Foundation

/// Writes a body to an exclusively created file while hashing it (SHA-1 for the legacy
/// content check, SHA-256 for our own integrity record) and counting it.
final class FileSink: @unchecked Sendable {
    // @unchecked: a Transport calls its sink sequentially for one request; the digest and
    // descriptor are touched only under the lock, and read after `get` returned.
    private let lock = NSLock()
    private var fd: Int32
    private let path: String
    private let digest = Digest(.sha1)
    private let sha256 = Digest(.sha256)
    private var written: Int64 = 0
    private let limit: Int64
    private(set) var overflow = false

    init(path: String, limit: Int64) throws {
        self.path = path
        self.limit = limit
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw MeteorError(.io, "cannot create \(path): \(String(cString: strerror(errno)))") }
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        try lock.withLock {
            guard written + Int64(bytes.count) <= limit else {
                overflow = true
                throw MeteorError(.tooLarge, "download of \(path) passed \(limit) bytes")
            }
            try AtomicFile.writeAll(fd: fd, bytes: bytes, path: path)
            digest.update(bytes)
            sha256.update(bytes)
            written += Int64(bytes.count)
        }
    }

    /// SHA-1 of the bytes written (call once).
    func digestHex() -> String { lock.withLock { digest.finalizeHex() } }
    /// SHA-256 of the bytes written (call once).
    func sha256Hex() -> String { lock.withLock { sha256.finalizeHex() } }

    func sync() throws {
        try lock.withLock {
            guard fsync(fd) == 0 else {
                let code = errno
                throw MeteorError(.io, "cannot fsync \(path): \(String(cString: strerror(code)))", underlying: POSIXErrorBox(code: code))
            }
        }
    }

    func close() {
        lock.withLock {
            if fd >= 0 { Foundation.close(fd) }
            fd = -1
        }
    }
}

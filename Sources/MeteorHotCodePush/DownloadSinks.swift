import ClientFoundation
import ClientUpdater
import Foundation
import Synchronization

/// Writes a body to an exclusively created file while hashing it (SHA-1 for the legacy
/// content check, SHA-256 for our own integrity record) and counting it.
final class FileSink: @unchecked Sendable {
    // @unchecked Sendable: it holds two OpenSSL digest contexts (`Digest`, not Sendable)
    // that are updated with the transport's unsafe buffers, so they cannot live in the
    // Mutex; they are touched only while `state`'s lock is held.
    private struct State {
        var fd: Int32
        var written: Int64 = 0
        var overflow = false
    }
    private let state: Mutex<State>
    private let digest = Digest(.sha1)
    private let sha256 = Digest(.sha256)
    private let path: String
    private let limit: Int64
    /// The body passed `limit` (the write that would have passed it threw).
    var overflow: Bool { state.withLock { $0.overflow } }

    init(path: String, limit: Int64) throws {
        self.path = path
        self.limit = limit
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw MeteorError(.io, "cannot create \(path): \(String(cString: strerror(errno)))") }
        state = Mutex(State(fd: fd))
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        try state.withLock { state in
            guard state.written + Int64(bytes.count) <= limit else {
                state.overflow = true
                throw MeteorError(.tooLarge, "download of \(path) passed \(limit) bytes")
            }
            try AtomicFile.writeAll(fd: state.fd, bytes: bytes, path: path)
            digest.update(bytes)
            sha256.update(bytes)
            state.written += Int64(bytes.count)
        }
    }

    /// SHA-1 of the bytes written (call once).
    func digestHex() -> String { state.withLock { _ in digest.finalizeHex() } }
    /// SHA-256 of the bytes written (call once).
    func sha256Hex() -> String { state.withLock { _ in sha256.finalizeHex() } }

    func sync() throws {
        try state.withLock { state in
            guard fsync(state.fd) == 0 else {
                let code = errno
                throw MeteorError(.io, "cannot fsync \(path): \(String(cString: strerror(code)))", underlying: POSIXErrorBox(code: code))
            }
        }
    }

    func close() {
        state.withLock { state in
            if state.fd >= 0 { Foundation.close(state.fd) }
            state.fd = -1
        }
    }
}

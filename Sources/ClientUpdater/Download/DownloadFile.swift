import ClientFoundation
import Foundation

/// The file a ``Downloader`` writes: created `O_CREAT|O_EXCL` 0600, or reopened to resume
/// (the bytes already there are re-hashed, never re-downloaded). Tracks its size and a
/// running digest of exactly the bytes on disk.
final class DownloadFile: @unchecked Sendable {
    // @unchecked Sendable: it holds an OpenSSL digest context (`Digest`, not Sendable) that
    // a transport's sink updates with its own unsafe buffers; a transport calls head and sink
    // serially, and the downloader touches the file only between transfers: never two
    // threads at once.
    let path: String
    let algorithm: Digest.Algorithm
    private let fd: Int32
    private var digest: Digest
    private(set) var size: Int64 = 0
    /// Bytes found on disk when the download started.
    let initialSize: Int64
    /// True when some bytes on disk were not fetched by a single from-zero request.
    private(set) var resumed = false
    /// Bytes from an earlier run still in the file (0 once it was reset).
    private(set) var keptFromEarlier: Int64 = 0

    init(path: String, algorithm: Digest.Algorithm) throws {
        self.path = path
        self.algorithm = algorithm
        digest = Digest(algorithm)
        var fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        if fd < 0 && errno == EEXIST {
            fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
        }
        guard fd >= 0 else { throw UpdaterError.io("cannot create", path: path, errno: errno) }
        self.fd = fd
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let e = errno
            close(fd)
            throw UpdaterError.io("cannot stat", path: path, errno: e)
        }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw UpdaterError(.io, "cannot download into \(path): not a regular file")
        }
        initialSize = Int64(st.st_size)
        keptFromEarlier = initialSize
        resumed = initialSize > 0
        do {
            try rehash(upTo: initialSize)
        } catch {
            close(fd)
            throw error
        }
    }

    deinit { close(fd) }

    /// Hashes the bytes already on disk (a partial download from an earlier run).
    private func rehash(upTo length: Int64) throws {
        let chunk = 1 << 18
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)
        defer { buffer.deallocate() }
        while size < length {
            let n = pread(fd, buffer.baseAddress, Int(min(Int64(chunk), length - size)), off_t(size))
            if n < 0 {
                if errno == EINTR { continue }
                throw UpdaterError.io("cannot read", path: path, errno: errno)
            }
            if n == 0 { break }
            digest.update(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
            size += Int64(n)
        }
    }

    /// Empties the file to start over from byte 0.
    func reset() throws {
        guard ftruncate(fd, 0) == 0 else { throw UpdaterError.io("cannot truncate", path: path, errno: errno) }
        digest = Digest(algorithm)
        size = 0
        resumed = false
        keptFromEarlier = 0
    }

    /// Notes that the next bytes continue earlier ones (a `Range` request).
    func markResumed() { if size > 0 { resumed = true } }

    /// Appends bytes at the end, hashing them.
    func append(_ bytes: UnsafeRawBufferPointer) throws {
        var done = 0
        while done < bytes.count {
            let n = pwrite(fd, bytes.baseAddress?.advanced(by: done), bytes.count - done, off_t(size + Int64(done)))
            if n < 0 {
                if errno == EINTR { continue }
                throw UpdaterError.io("cannot write", path: path, errno: errno)
            }
            done += n
        }
        digest.update(bytes)
        size += Int64(bytes.count)
    }

    func sync() throws {
        guard fsync(fd) == 0 else { throw UpdaterError.io("cannot fsync", path: path, errno: errno) }
    }

    /// The hex digest of the whole file. Ends the running digest: call ``reset()`` to
    /// download again.
    func finishDigest() -> String { digest.finalizeHex() }

    func remove() { unlink(path) }

    /// Runs `body` with the file's own descriptor positioned at byte 0, so what was
    /// hashed is exactly what is read next (no re-open by path between check and use).
    func withDescriptorAtStart<T>(_ body: (Int32) throws -> T) throws -> T {
        guard lseek(fd, 0, SEEK_SET) == 0 else { throw UpdaterError.io("cannot seek", path: path, errno: errno) }
        return try body(fd)
    }
}

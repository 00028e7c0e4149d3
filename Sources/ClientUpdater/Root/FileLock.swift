import Foundation

/// An advisory `flock(2)` lock on `<root>/lock`: one writer per root at a time.
///
/// The lock is released when the object is released or the process dies (even by
/// SIGKILL), so a crashed run never leaves a root locked.
public final class FileLock: @unchecked Sendable {
    // @unchecked: `fd` is set once in init and closed once in deinit; flock itself is thread-safe.
    private let fd: Int32
    public let path: String

    /// Takes the lock, waiting up to `wait` seconds (0 = fail at once).
    /// - Throws: ``UpdaterError`` `.locked` when another process holds it past `wait`,
    ///   `.corruptState` when `lock` is a symlink or not a regular file.
    public init(path: String, wait: Double) throws {
        self.path = path
        // Never follow a symlink planted as `lock` (it could point at any file the
        // process may write), and never block opening a FIFO planted there.
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o644)
        guard fd >= 0 else {
            if errno == ELOOP {
                throw UpdaterError(.corruptState, "\(path) is a symbolic link: refusing to follow it (remove it; clientctl creates the lock file)")
            }
            throw UpdaterError.io("cannot open lock", path: path, errno: errno)
        }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw UpdaterError(.corruptState, "\(path) is not a regular file: refusing to use it as the lock (remove it)")
        }
        let deadline = Date().addingTimeInterval(max(0, wait))
        var delay = 0.005
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let err = errno
            guard err == EWOULDBLOCK || err == EINTR else {
                close(fd)
                throw UpdaterError.io("cannot lock", path: path, errno: err)
            }
            if Date() >= deadline {
                close(fd)
                throw UpdaterError(.locked, "\(path) is locked by another clientctl process; waited \(wait) s (retry later, or wait longer)")
            }
            usleep(UInt32(delay * 1_000_000))
            delay = min(delay * 2, 0.1)
        }
        self.fd = fd
    }

    deinit {
        flock(fd, LOCK_UN)
        close(fd)
    }
}

import ClientFoundation
import Foundation

/// An advisory `flock(2)` lock on `<root>/lock`: one writer per root at a time.
///
/// The lock is released when the object is released or the process dies (even by
/// SIGKILL), so a crashed run never leaves a root locked.
package final class FileLock: Sendable {
    // `fd` is set once in init and closed once in deinit; flock itself is thread-safe.
    private let fd: Int32
    package let path: String

    /// Takes the lock, waiting up to `wait` seconds (0 = fail at once) without holding a
    /// thread: each attempt (`open`, `flock(LOCK_NB)`) runs on the ``BlockingExecutor`` and
    /// the wait between attempts is `Task.sleep` (5 ms doubling to 100 ms), so a waiting
    /// actor or task suspends and no thread sleeps. Every lock wait of clientctl is this one.
    /// - Throws: ``UpdaterError`` `.locked` when another process holds it past `wait`,
    ///   `.corruptState` when `lock` is a symlink or not a regular file.
    package static func acquire(path: String, wait: Double) async throws -> FileLock {
        let fd = try await BlockingExecutor.run { try openChecked(path) }
        let deadline = ContinuousClock.now + .milliseconds(Int64(max(0, wait) * 1000))
        var delay = Duration.milliseconds(5)
        do {
            while try await !BlockingExecutor.run({ try tryLock(fd, path: path) }) {
                guard ContinuousClock.now < deadline else { throw lockedError(path, wait: wait) }
                try await Task.sleep(for: delay)
                delay = min(delay * 2, .milliseconds(100))
            }
        } catch {
            close(fd)
            throw error
        }
        return FileLock(fd: fd, path: path)
    }

    /// The lock when it is free now, else nil: one `open` and one `flock(LOCK_NB)`, never a
    /// wait. For synchronous callers that must not wait (a test fixture making a fresh
    /// root); everything that may wait uses ``acquire(path:wait:)``.
    /// - Throws: ``UpdaterError`` `.corruptState` when `lock` is a symlink or not a regular file.
    package static func attempt(path: String) throws -> FileLock? {
        let fd = try openChecked(path)
        do {
            guard try tryLock(fd, path: path) else {
                close(fd)
                return nil
            }
        } catch {
            close(fd)
            throw error
        }
        return FileLock(fd: fd, path: path)
    }

    /// The error of a lock another process held past `wait` seconds.
    static func lockedError(_ path: String, wait: Double) -> UpdaterError {
        UpdaterError(.locked, "\(path) is locked by another clientctl process; waited \(wait) s (retry later, or wait longer)")
    }

    private init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
    }

    /// Opens the lock file: never through a symlink planted as `lock` (it could point at
    /// any file the process may write), never blocking on a FIFO planted there.
    private static func openChecked(_ path: String) throws -> Int32 {
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
        return fd
    }

    /// One `flock(LOCK_EX | LOCK_NB)`: true when taken, false when another holds it.
    private static func tryLock(_ fd: Int32, path: String) throws -> Bool {
        if flock(fd, LOCK_EX | LOCK_NB) == 0 { return true }
        let err = errno
        guard err == EWOULDBLOCK || err == EINTR else { throw UpdaterError.io("cannot lock", path: path, errno: err) }
        return false
    }

    deinit {
        flock(fd, LOCK_UN)
        close(fd)
    }
}

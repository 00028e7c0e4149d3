import Foundation

/// The lock of update checks: one check at a time per root, across processes, while
/// the root's writers (switch, trial, acknowledgement, rollback) go on beside it.
///
/// It is an open-file-description lock (`F_OFD_SETLK`) on the first byte of the root's
/// `lock` file: independent of the `flock` on the same file (``FileLock``), so a check
/// can download for minutes holding this lock while the watchdog takes the `flock` for
/// the few milliseconds it writes; no other file in the root. Like `flock`, it belongs
/// to the open file (two opens in one process exclude each other) and dies with the
/// process, even by SIGKILL.
///
/// Retention takes it without waiting and is put off while a check runs: a version a
/// check has just stored is not yet pending and must not be collected
/// (docs/watchdog.md#what-takes-the-gate).
final class CheckLock: Sendable {
    private let fd: Int32

    private init(fd: Int32) { self.fd = fd }

    deinit { close(fd) }  // closing the description releases its locks

    /// Takes the lock, waiting up to `wait` seconds (0 = fail at once) without blocking
    /// a thread: the wait is `Task.sleep` between attempts.
    /// - Throws: ``UpdaterError`` `.locked` when another check holds it past `wait`.
    static func acquire(_ layout: RootLayout, wait: Double) async throws -> CheckLock {
        let deadline = ContinuousClock.now + .milliseconds(Int64(max(0, wait) * 1000))
        var delay = Duration.milliseconds(5)
        while true {
            if let lock = try attempt(layout) { return lock }
            guard ContinuousClock.now < deadline else {
                throw UpdaterError(
                    .locked,
                    "\(layout.lock) is locked by another clientctl process running an update check; waited \(wait) s (retry later, or wait longer)")
            }
            try await Task.sleep(for: delay)
            delay = min(delay * 2, .milliseconds(100))
        }
    }

    /// The lock when it is free now, else nil.
    static func attempt(_ layout: RootLayout) throws -> CheckLock? {
        let fd = open(layout.lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o644)
        guard fd >= 0 else {
            if errno == ELOOP {
                throw UpdaterError(
                    .corruptState, "\(layout.lock) is a symbolic link: refusing to follow it (remove it; clientctl creates the lock file)")
            }
            throw UpdaterError.io("cannot open lock", path: layout.lock, errno: errno)
        }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw UpdaterError(.corruptState, "\(layout.lock) is not a regular file: refusing to use it as the lock (remove it)")
        }
        var region = flock()
        region.l_type = Int16(F_WRLCK)
        region.l_whence = Int16(SEEK_SET)
        region.l_start = 0
        region.l_len = 1
        if fcntl(fd, Self.setOFDLock, &region) == 0 { return CheckLock(fd: fd) }
        let err = errno
        close(fd)
        guard err == EAGAIN || err == EACCES || err == EINTR else {
            throw UpdaterError.io("cannot lock", path: layout.lock, errno: err)
        }
        return nil
    }

    /// `F_OFD_SETLK` (Linux 3.15+; glibc defines it only under `_GNU_SOURCE`).
    private static let setOFDLock: Int32 = 37
}

import ClientFoundation
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
    private let lock: Flock

    private init(lock: Flock) { self.lock = lock }

    /// Takes the lock, waiting up to `wait` (zero = fail at once) without blocking a thread:
    /// the wait between attempts is a sleep on `clock` (ClientFoundation's `LockWait`).
    /// - Throws: ``UpdaterError`` `.locked` when another check holds it past `wait`.
    static func acquire(_ layout: RootLayout, wait: Duration, clock: MonotonicClock = .continuous) async throws -> CheckLock {
        var taken: CheckLock?
        guard
            try await LockWait(wait, clock: clock).until({
                taken = try attempt(layout)
                return taken != nil
            }), let taken
        else {
            throw UpdaterError(
                .locked,
                "\(layout.lock) is locked by another clientctl process running an update check; waited \(wait.inSeconds) s (retry later, or wait longer)"
            )
        }
        return taken
    }

    /// The lock when it is free now, else nil.
    static func attempt(_ layout: RootLayout) throws -> CheckLock? {
        do {
            return try Flock.attempt(layout.lock, .file, .firstByte).map(CheckLock.init(lock:))
        } catch .symlink {
            throw UpdaterError(.corruptState, "\(layout.lock) is a symbolic link: refusing to follow it (remove it; clientctl creates the lock file)")
        } catch .notRegularFile {
            throw UpdaterError(.corruptState, "\(layout.lock) is not a regular file: refusing to use it as the lock (remove it)")
        } catch .cannotOpen(let err) {
            throw UpdaterError.io("cannot open lock", path: layout.lock, errno: err)
        } catch .cannotLock(let err) {
            throw UpdaterError.io("cannot lock", path: layout.lock, errno: err)
        }
    }
}

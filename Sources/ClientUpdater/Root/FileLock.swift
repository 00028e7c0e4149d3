import ClientFoundation
import Foundation

/// An advisory `flock(2)` lock on `<root>/lock`: one writer per root at a time.
///
/// The lock is released when the object is released or the process dies (even by
/// SIGKILL), so a crashed run never leaves a root locked.
package final class FileLock: Sendable {
    /// The lock held (ClientFoundation's one `flock`).
    private let held: Flock
    package var path: String { held.path }

    /// Takes the lock, waiting up to `wait` (zero = fail at once) without holding a thread:
    /// each attempt (`open`, `flock(LOCK_NB)`: ``Flock/attempt(_:_:)``) runs on the
    /// ``BlockingExecutor`` and the wait between attempts (5 ms doubling to 100 ms) is a
    /// sleep on `clock`, so a waiting actor or task suspends and no thread sleeps. Every lock
    /// wait of a device is this one. Another process releases a lock in real time, so callers
    /// keep the real clock; a test passes a manual one and moves it.
    /// - Throws: ``UpdaterError`` `.locked` when another process holds it past `wait`,
    ///   `.corruptState` when `lock` is a symlink or not a regular file.
    package static func acquire(path: String, wait: Duration, clock: MonotonicClock = .continuous) async throws -> FileLock {
        // One descriptor for every attempt: it stays open while this waiter waits.
        let lock = try await BlockingExecutor.run { try inUpdaterWords(path) { () throws(Flock.Failure) in try Flock.opening(path, .file) } }
        let taken = try await LockWait(wait, clock: clock).until {
            try await BlockingExecutor.run { try inUpdaterWords(path) { () throws(Flock.Failure) in try lock.tryLock() } }
        }
        guard taken else { throw lockedError(path, wait: wait) }
        return FileLock(lock)
    }

    /// The lock when it is free now, else nil: one `open` and one `flock(LOCK_NB)`, never a
    /// wait. For synchronous callers that must not wait (a test fixture making a fresh
    /// root); everything that may wait uses ``acquire(path:wait:clock:)``.
    /// - Throws: ``UpdaterError`` `.corruptState` when `lock` is a symlink or not a regular file.
    package static func attempt(path: String) throws -> FileLock? {
        try attemptOnce(path).map(FileLock.init)
    }

    /// The error of a lock another process held past `wait`.
    static func lockedError(_ path: String, wait: Duration) -> UpdaterError {
        UpdaterError(.locked, "\(path) is locked by another clientctl process; waited \(wait.inSeconds) s (retry later, or wait longer)")
    }

    private init(_ held: Flock) { self.held = held }

    /// One attempt, its failures in the updater's words.
    private static func attemptOnce(_ path: String) throws -> Flock? {
        try inUpdaterWords(path) { () throws(Flock.Failure) in try Flock.attempt(path, .file) }
    }

    /// `body`'s failures in the updater's words.
    private static func inUpdaterWords<T>(_ path: String, _ body: () throws(Flock.Failure) -> T) throws -> T {
        do {
            return try body()
        } catch .symlink {
            throw UpdaterError(.corruptState, "\(path) is a symbolic link: refusing to follow it (remove it; clientctl creates the lock file)")
        } catch .notRegularFile {
            throw UpdaterError(.corruptState, "\(path) is not a regular file: refusing to use it as the lock (remove it)")
        } catch .cannotOpen(let err) {
            throw UpdaterError.io("cannot open lock", path: path, errno: err)
        } catch .cannotLock(let err) {
            throw UpdaterError.io("cannot lock", path: path, errno: err)
        }
    }
}

import Foundation
import Synchronization

/// The one file lock of clientctl: an exclusive advisory lock on a lock file or a folder,
/// released when the value is released or the process dies (even by SIGKILL), so a crash
/// never leaves anything locked. Every lock of the package is one of these: a root's
/// `lock` (and, on its first byte, the root's update-check lock), the report journal's, a
/// release folder's, an apt repository's parent folder; each caller says in its own words
/// what a ``Failure`` or a busy lock means.
package final class Flock: Sendable {
    /// What is locked.
    package enum Kind: Sendable {
        /// A lock file, created (0644) when missing; never opened through a symbolic link
        /// planted in its place (it could point at any file the process may write), never
        /// blocking on a FIFO, refused unless it is a regular file.
        case file
        /// A folder, which is only opened (nothing is written into it).
        case folder
    }

    /// Which lock ``tryLock(_:)`` takes on the open file.
    package enum Mode: Sendable {
        /// `flock(2)` on the whole file.
        case whole
        /// An open-file-description lock (`F_OFD_SETLK`, Linux 3.15+) on the first byte:
        /// independent of a `flock` on the same file, so one lock file serves two locks
        /// of different purposes (a root's update check beside its writers). Like `flock`,
        /// it belongs to the open file and dies with it.
        case firstByte
    }

    /// Why a lock could not be tried (another process holding it is not a failure).
    package enum Failure: Error, Sendable, Equatable {
        /// The lock file is a symbolic link.
        case symlink
        /// The lock file is not a regular file (a FIFO, a folder, a device).
        case notRegularFile
        /// `open` failed with this errno.
        case cannotOpen(Int32)
        /// `flock` failed with this errno (not because another process holds it).
        case cannotLock(Int32)
    }

    /// The path locked.
    package let path: String
    // Set once in init; unlocked and closed once, by release() or deinit.
    private let fd: Int32
    private let holding = Mutex(true)

    private init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
    }

    /// Releases the lock now (again: nothing); otherwise it goes with the value.
    package func release() {
        guard
            holding.withLock({ held in
                defer { held = false }
                return held
            })
        else { return }
        flock(fd, LOCK_UN)
        close(fd)
    }

    deinit { release() }

    /// Opens `path` for locking without taking the lock yet: a waiter keeps its descriptor
    /// open between its ``tryLock()`` attempts. Released (closed) like a lock.
    package static func opening(_ path: String, _ kind: Kind) throws(Failure) -> Flock {
        Flock(fd: try descriptor(path, kind), path: path)
    }

    /// One exclusive lock attempt on the open descriptor (`flock(LOCK_EX | LOCK_NB)`, or an
    /// OFD write lock of the first byte): true when taken (or already held), false when
    /// another open file holds it. Never waits.
    package func tryLock(_ mode: Mode = .whole) throws(Failure) -> Bool {
        switch mode {
        case .whole:
            if flock(fd, LOCK_EX | LOCK_NB) == 0 { return true }
        case .firstByte:
            var region = flock()
            region.l_type = Int16(F_WRLCK)
            region.l_whence = Int16(SEEK_SET)
            region.l_start = 0
            region.l_len = 1
            if fcntl(fd, Self.setOFDLock, &region) == 0 { return true }
        }
        let err = errno
        guard err == EWOULDBLOCK || err == EACCES || err == EINTR else { throw .cannotLock(err) }
        return false
    }

    /// `F_OFD_SETLK` (glibc defines it only under `_GNU_SOURCE`).
    private static let setOFDLock: Int32 = 37

    /// One attempt now: the lock, or nil when another process holds it. Never waits.
    package static func attempt(_ path: String, _ kind: Kind, _ mode: Mode = .whole) throws(Failure) -> Flock? {
        let lock = try opening(path, kind)
        return try lock.tryLock(mode) ? lock : nil
    }

    /// Attempts until `wait` has passed, sleeping this thread between attempts (from
    /// `firstDelay`, doubling up to `maxDelay`): the lock, or nil when another process still
    /// holds it. One descriptor serves every attempt. For synchronous callers; an async
    /// caller opens once (``opening(_:_:)``) and waits with ``LockWait``, which suspends the
    /// task instead, so that no thread waits (the root's `FileLock`).
    package static func waiting(
        _ path: String, _ kind: Kind, for wait: Duration, firstDelay: Duration = .milliseconds(1), maxDelay: Duration = .milliseconds(100)
    ) throws(Failure) -> Flock? {
        // A duration: on the monotonic clock, which a wall clock set back or forth never moves.
        let clock = MonotonicClock.continuous
        let deadline = clock.now + max(wait, .zero)
        var delay = firstDelay
        let lock = try opening(path, kind)
        while true {
            if try lock.tryLock() { return lock }
            let left = deadline - clock.now
            guard left > .zero else { return nil }
            Thread.sleep(forTimeInterval: min(delay, left).inSeconds)
            delay = min(delay * 2, maxDelay)
        }
    }

    private static func descriptor(_ path: String, _ kind: Kind) throws(Failure) -> Int32 {
        switch kind {
        case .folder:
            let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard fd >= 0 else { throw .cannotOpen(errno) }
            return fd
        case .file:
            let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o644)
            guard fd >= 0 else { throw errno == ELOOP ? .symlink : .cannotOpen(errno) }
            var st = stat()
            guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG else {
                close(fd)
                throw .notRegularFile
            }
            return fd
        }
    }
}

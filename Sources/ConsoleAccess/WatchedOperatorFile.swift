import Foundation
import Synchronization

/// The operators file as a running console sees it: read again whenever it changed on disk
/// (another inode, size or modification time), so `clientctl operator add` or `remove`
/// takes effect at the next request, without a restart.
///
/// It fails closed: while the file is missing or broken, ``current()`` throws and no one
/// logs in (the console says why), rather than trusting the last good copy of a file that
/// someone may have changed on purpose.
public final class WatchedOperatorFile: Sendable {
    /// The file's path.
    public let path: String

    private struct Stamp: Equatable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var seconds: Int
        var nanoseconds: Int
    }

    private let state: Mutex<(stamp: Stamp, file: OperatorFile)?>

    /// Reads the file at `path` now.
    /// - Throws: what ``OperatorFile/load(_:)`` throws, so a console refuses to start on a
    ///   missing or broken file.
    public init(path: String) throws(ConsoleAccessError) {
        self.path = path
        let stamp = Self.stamp(path)
        let file = try OperatorFile.load(path)
        state = Mutex(stamp.map { ($0, file) })
    }

    /// The file as it is on disk now: the copy read before when it did not change since.
    /// - Throws: what ``OperatorFile/load(_:)`` throws when the file changed and is now
    ///   missing or broken.
    public func current() throws(ConsoleAccessError) -> OperatorFile {
        let stamp = Self.stamp(path)
        if let stamp, let kept = state.withLock({ $0 }), kept.stamp == stamp { return kept.file }
        let file = try OperatorFile.load(path)
        state.withLock { $0 = stamp.map { ($0, file) } }
        return file
    }

    private static func stamp(_ path: String) -> Stamp? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return Stamp(
            device: UInt64(st.st_dev), inode: UInt64(st.st_ino), size: Int64(st.st_size), seconds: st.st_mtim.tv_sec,
            nanoseconds: st.st_mtim.tv_nsec)
    }
}

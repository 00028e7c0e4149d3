import Foundation

/// Changes to one folder's entries, from the kernel (inotify): a file written and closed,
/// one renamed into place, made, removed or changed in its attributes. A test that waits
/// for a device root to reach a state asks `clientctl status` again when the root changed,
/// not ten times a second: each ask is a process, and on a 2-core machine a suite of such
/// waits spent a core spawning them.
public final class FolderWatch: Sendable {
    private let fd: Int32

    /// Watches `folder` (not its subfolders); nil when the kernel refuses (no inotify).
    public init?(_ folder: String) {
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { return nil }
        let mask = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_ATTRIB | IN_MOVED_FROM)
        guard inotify_add_watch(fd, folder, mask) >= 0 else {
            close(fd)
            return nil
        }
        self.fd = fd
    }

    deinit { close(fd) }

    /// True when the folder changed since the last call (the events are consumed).
    public func changed() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        var any = false
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { return any }
            any = true
        }
    }

    /// Returns when the folder changed, or after `limit` at the latest (a bound, not a
    /// measure: what changes outside the folder is seen then).
    public func next(within limit: Duration) async throws {
        let end = ContinuousClock.now + limit
        while ContinuousClock.now < end {
            if changed() { return }
            try await Task.sleep(for: .milliseconds(25))
        }
    }
}

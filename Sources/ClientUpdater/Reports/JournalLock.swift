import ClientFoundation
import Foundation

/// `reports/lock`: ClientFoundation's one `flock`, tried for about 0.1 s in all (1 ms
/// doubling to 30 ms), so a report never waits long for another process's append.
struct JournalLock {
    private let held: Flock

    static func take(_ path: String, folder: String) -> JournalLock? {
        if mkdir(folder, 0o755) != 0, errno != EEXIST { return nil }
        guard let held = try? Flock.waiting(path, .file, for: .milliseconds(100), firstDelay: .milliseconds(1), maxDelay: .milliseconds(30)) else {
            return nil
        }
        return JournalLock(held: held)
    }

    /// Releases the lock now (it also goes with the last copy of the value).
    func release() { held.release() }
}

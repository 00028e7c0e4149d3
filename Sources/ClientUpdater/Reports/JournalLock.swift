import Foundation

/// `reports/lock`: a non-blocking `flock` taken with a few short retries (about 0.1 s in
/// all), so a report never waits long for another process's append.
struct JournalLock {
    let fd: Int32

    static func take(_ path: String, folder: String) -> JournalLock? {
        if mkdir(folder, 0o755) != 0, errno != EEXIST { return nil }
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o644)
        guard fd >= 0 else { return nil }
        var delay: useconds_t = 1_000
        for attempt in 0..<8 {
            if flock(fd, LOCK_EX | LOCK_NB) == 0 { return JournalLock(fd: fd) }
            guard errno == EWOULDBLOCK || errno == EINTR, attempt < 7 else { break }
            usleep(delay)
            delay = min(delay * 2, 30_000)
        }
        close(fd)
        return nil
    }

    func release() {
        flock(fd, LOCK_UN)
        close(fd)
    }
}

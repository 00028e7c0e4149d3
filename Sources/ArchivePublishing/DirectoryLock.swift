import Foundation
import SignedManifest

/// An exclusive `flock` on a folder (nothing is written into the release folder).
struct DirectoryLock {
    let fd: Int32

    init(_ path: String) throws {
        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw ArchivePublishingError(.io, "cannot open \(path): \(String(cString: strerror(errno)))") }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            throw ArchivePublishingError(.busy, "\(path) is being published by another clientctl process; retry later")
        }
    }

    func release() {
        flock(fd, LOCK_UN)
        close(fd)
    }
}

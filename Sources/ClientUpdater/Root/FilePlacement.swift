import ClientFoundation
import Foundation

/// The one link-or-copy rule of the device root: the organizer places a version's files
/// into `serving/` and the Meteor channel reuses verified files with it.
package enum FilePlacement {
    /// Hard-links `source` to `destination` (which must not exist yet), or copies it when
    /// the file system cannot link (another device, the link limit, no permission, no hard
    /// links). A copy is written beside `destination` and renamed into place, so a crash
    /// never leaves a partial file under the final name.
    /// - Returns: true when it was linked.
    package static func linkOrCopy(_ source: String, to destination: String) throws -> Bool {
        if link(source, destination) == 0 { return true }
        let code = errno
        guard code == EXDEV || code == EMLINK || code == EPERM || code == EACCES || code == ENOTSUP else {
            throw UpdaterError.io("cannot link \(source) to", path: destination, errno: code)
        }
        let temporary = destination + ".tmp-copy-\(UInt32.random(in: 0...UInt32.max))"
        do {
            _ = try copy(source, to: temporary)
        } catch {
            unlink(temporary)
            throw error
        }
        guard rename(temporary, destination) == 0 else {
            let failure = errno
            unlink(temporary)
            throw UpdaterError.io("cannot move a copy into", path: destination, errno: failure)
        }
        return false
    }

    /// Copies a regular file's bytes to a new file (never loading it whole); returns the
    /// bytes copied.
    package static func copy(_ source: String, to destination: String) throws -> Int64 {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw UpdaterError.io("cannot open", path: source, errno: errno) }
        defer { close(input) }
        let output = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard output >= 0 else { throw UpdaterError.io("cannot create", path: destination, errno: errno) }
        defer { close(output) }
        let size = 1 << 16
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 16)
        defer { buffer.deallocate() }
        var total: Int64 = 0
        while true {
            let n = Foundation.read(input, buffer.baseAddress, size)
            if n < 0 {
                if errno == EINTR { continue }
                throw UpdaterError.io("cannot read", path: source, errno: errno)
            }
            if n == 0 { break }
            try AtomicFile.writeAll(fd: output, bytes: UnsafeRawBufferPointer(rebasing: buffer[0..<n]), path: destination)
            total += Int64(n)
        }
        return total
    }
}

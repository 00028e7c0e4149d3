import Foundation

/// A small tmpfs: a real file system that fills up, for full-disk tests (they run as root).
public struct Tmpfs: Sendable {
    /// Where it is mounted.
    public let path: String

    /// Mounts a tmpfs of `size` (`mount -o size=`, e.g. `20m`) on the existing folder `path`.
    /// - Throws: ``TmpfsError`` naming the cause when the mount fails: the full-disk tests
    ///   need root with `CAP_SYS_ADMIN` (the test suite runs as root); they never skip.
    public static func mount(at path: String, size: String) throws -> Tmpfs {
        let mounted = try Subprocess.run("mount", ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", path])
        guard mounted.status == 0 else {
            throw TmpfsError(
                description: "mount tmpfs on \(path) failed (the full-disk tests run as root with CAP_SYS_ADMIN): \(mounted.errorOutput)")
        }
        return Tmpfs(path: path)
    }

    /// Unmounts it (call in the test's cleanup).
    public func unmount() { _ = try? Subprocess.run("umount", [path]) }

    /// Bytes free on the file system holding `path`.
    public static func free(at path: String) -> Int64 {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return 0 }
        return Int64(info.f_bavail) * Int64(info.f_frsize)
    }

    /// Appends to the file `path` until its file system has at most `leaving` bytes free.
    public static func fill(_ path: String, leaving: Int64) {
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let folder = (path as NSString).deletingLastPathComponent
        var chunk = 1 << 20
        let zeros = [UInt8](repeating: 0, count: chunk)
        while chunk > 0 {
            let free = Self.free(at: folder)
            guard free > leaving else { return }
            let size = Int(min(Int64(chunk), free - leaving))
            if zeros.withUnsafeBytes({ write(fd, $0.baseAddress, size) }) < size { chunk /= 2 }
        }
    }

    /// Removes the filler file `path` (from ``fill(_:leaving:)``) and waits until its file
    /// system has at least `bytes` free again, for at most `timeout` on the monotonic clock.
    /// The space can come back late: a child that another test forks while the filler is
    /// open holds a copy of its descriptor until that child's `exec`, which takes a while
    /// on a loaded machine.
    /// - Throws: ``TmpfsError`` when the space is not back in time.
    public static func removeFiller(_ path: String, untilFree bytes: Int64 = 65_536, timeout: Duration = .seconds(30)) throws {
        let folder = (path as NSString).deletingLastPathComponent
        guard unlink(path) == 0 || errno == ENOENT else {
            throw TmpfsError(description: "cannot remove \(path): errno \(errno)")
        }
        let (seconds, attoseconds) = timeout.components
        do {
            try Poll.untilBlocking("free space", timeout: Double(seconds) + Double(attoseconds) / 1e18) { free(at: folder) >= bytes }
        } catch {
            throw TmpfsError(description: "\(folder) has \(free(at: folder)) bytes free \(timeout) after its filler went")
        }
    }
}

struct TmpfsError: Error, CustomStringConvertible {
    let description: String
}

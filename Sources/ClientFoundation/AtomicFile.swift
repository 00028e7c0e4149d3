import Foundation

/// Durable file-system primitives: atomic replacement and directory fsync.
///
/// Writes follow docs/device-layout.md#atomic-writes: write a temporary
/// file beside the target, fsync it, rename it over the target, fsync the folder.
public enum AtomicFile {
    /// Atomically replaces `path` with `data` (0644 unless `mode` says otherwise).
    public static func write(_ data: Data, to path: String, mode: mode_t = 0o644) throws {
        let dir = (path as NSString).deletingLastPathComponent
        let tmp = path + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { throw FileSystemError.io("cannot create", path: tmp, errno: errno) }
        var ok = false
        defer {
            if !ok { unlink(tmp) }
        }
        do {
            try writeAll(fd: fd, data: data, path: tmp)
            try FaultPoint.hit("atomic.written") { FileSystemError.io("cannot write", path: tmp, errno: $0) }
            guard fsync(fd) == 0 else { throw FileSystemError.io("cannot fsync", path: tmp, errno: errno) }
            fchmod(fd, mode)
        } catch {
            close(fd)
            throw error
        }
        close(fd)
        try FaultPoint.hit("atomic.before-rename") { FileSystemError.io("cannot rename into", path: path, errno: $0) }
        guard rename(tmp, path) == 0 else { throw FileSystemError.io("cannot rename into", path: path, errno: errno) }
        ok = true
        let folder = dir.isEmpty ? "." : dir
        try FaultPoint.hit("atomic.renamed") { FileSystemError.io("cannot fsync folder", path: folder, errno: $0) }
        try syncDirectory(folder)
    }

    /// Removes the `<name>.tmp-<pid>-<random>` files that ``write(_:to:mode:)`` left in
    /// `dir` when its process died before the rename (a crash or a kill). Only files of
    /// processes that no longer exist are removed, so a concurrent writer is never hurt.
    public static func removeStaleTemporaries(in dir: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir) else { return }
        for name in names {
            guard let marker = name.range(of: ".tmp-", options: .backwards) else { continue }
            let rest = name[marker.upperBound...].split(separator: "-", omittingEmptySubsequences: false)
            guard rest.count == 2, let pid = Int32(rest[0]), pid > 0, pid != getpid(), UInt32(rest[1]) != nil else { continue }
            guard kill(pid, 0) != 0, errno == ESRCH else { continue }  // still running
            unlink(dir + "/" + name)
        }
    }

    /// Writes all of `data` to `fd`, retrying on short writes and `EINTR`.
    public static func writeAll(fd: Int32, data: Data, path: String) throws {
        try data.withUnsafeBytes { (buf: UnsafeRawBufferPointer) in
            try writeAll(fd: fd, bytes: buf, path: path)
        }
    }

    /// Writes all of `bytes` to `fd`, retrying on short writes and `EINTR`.
    public static func writeAll(fd: Int32, bytes: UnsafeRawBufferPointer, path: String) throws {
        var offset = 0
        while offset < bytes.count {
            let n = Foundation.write(fd, bytes.baseAddress?.advanced(by: offset), bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                throw FileSystemError.io("cannot write", path: path, errno: errno)
            }
            offset += n
        }
    }

    /// fsyncs a directory so that renames and unlinks inside it are durable.
    public static func syncDirectory(_ path: String) throws {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw FileSystemError.io("cannot open folder", path: path, errno: errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw FileSystemError.io("cannot fsync folder", path: path, errno: errno) }
    }

    /// Creates a directory (and its parents) with mode 0755 if it does not exist.
    public static func makeDirectory(_ path: String) throws {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        } catch {
            throw FileSystemError(.io, "cannot create folder \(path): \(error.localizedDescription)")
        }
    }

    /// Removes a file or a whole tree if present; never follows a symlink out of it.
    public static func removeTree(_ path: String) throws {
        var st = stat()
        guard lstat(path, &st) == 0 else { return }
        do {
            try FileManager.default.removeItem(atPath: path)
        } catch {
            throw FileSystemError(.io, "cannot remove \(path): \(error.localizedDescription)")
        }
    }
}

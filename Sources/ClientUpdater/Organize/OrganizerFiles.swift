import Foundation

/// File-system helpers of the ``Organizer``: URL path mapping, linking and copying.
enum OrganizerFiles {
    /// The percent-decoded form of a URL path (as the server looks it up).
    static func decoded(_ urlPath: String) -> String { ServedPathRule.decoded(urlPath) }

    /// The file a URL path is stored at (``ServedPathRule/relativeFile(forURLPath:)``).
    static func relativeFile(forURLPath urlPath: String) -> String? { ServedPathRule.relativeFile(forURLPath: urlPath) }

    /// Refuses layouts where one file would need to be a folder for another (`/a`, `/a/b`).
    static func checkNoFileIsAFolder(_ files: [String], version: String) throws {
        let all = Set(files)
        for file in files {
            var prefix = Substring(file)
            while let slash = prefix.lastIndex(of: "/") {
                prefix = prefix[..<slash]
                if all.contains(String(prefix)) {
                    throw UpdaterError(.invalidArgument, "cannot organize version \(version): /\(prefix) is both a file and a folder of /\(file)")
                }
            }
        }
    }

    static func read(_ path: String) throws -> Data {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw UpdaterError(.notFound, "cannot read \(path)")
        }
        return data
    }

    /// Writes a new file (fails if it exists) with mode 0644.
    static func write(_ data: Data, to path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw UpdaterError.io("cannot create", path: path, errno: errno) }
        defer { close(fd) }
        try AtomicFile.writeAll(fd: fd, data: data, path: path)
    }

    /// Hard-links `source` to `destination`, or copies it when linking is impossible.
    /// - Returns: true when it was linked.
    static func linkOrCopy(_ source: String, to destination: String) throws -> Bool {
        if link(source, destination) == 0 { return true }
        let code = errno
        guard code == EXDEV || code == EMLINK || code == EPERM || code == EACCES || code == ENOTSUP else {
            throw UpdaterError.io("cannot link \(source) to", path: destination, errno: code)
        }
        _ = try copy(source, to: destination)
        return false
    }

    /// Copies a regular file's bytes (never loading it whole); returns bytes copied.
    static func copy(_ source: String, to destination: String) throws -> Int64 {
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

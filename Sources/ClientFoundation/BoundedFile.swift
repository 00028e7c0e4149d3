import Foundation

/// Reads local files (config, state, sidecars, a bundle's manifest and page) with a size cap.
///
/// A local file is input like any other: a 1 GB `state.json` must cost neither 1 GB of
/// memory nor a 1 GB copy. The file is opened without blocking (a FIFO planted in its
/// place cannot hang the caller), must be a regular file, and is refused past `cap`
/// bytes before anything is read. It is read with read(2), never `FileManager`, whose
/// Linux read of an empty file leaks a 4 KiB chunk (FUZZING.md).
package enum BoundedFile {
    /// The cap on `config.json`, `state.json` and `last-check.json` (1 MiB).
    package static let localStateCap = 1 << 20

    /// The file's bytes, or `nil` when it does not exist.
    /// - Throws: the module's error with `code` when the file is not a regular file or
    ///   cannot be read, and with `tooLarge` (else `code`) when it is larger than `cap`.
    package static func read<Code>(_ path: String, cap: Int, code: Code, tooLarge: Code? = nil) throws(ModuleError<Code>) -> Data? {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw ModuleError(code, "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw ModuleError(code, "cannot read \(path): \(String(cString: strerror(errno)))") }
        guard st.st_mode & S_IFMT == S_IFREG else { throw ModuleError(code, "\(path) is not a regular file") }
        guard st.st_size <= cap else { throw refusal(path, size: Int64(st.st_size), cap: cap, code: tooLarge ?? code) }
        // Read in chunks (never more than the file's size plus one chunk in memory), so a
        // file that grows after fstat is still stopped at the cap.
        var data = Data()
        data.reserveCapacity(Int(st.st_size) + 1)
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var total = 0
        while total <= cap {
            let n = chunk.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw ModuleError(code, "cannot read \(path): \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            data.append(contentsOf: chunk[0..<n])
            total += n
        }
        guard total <= cap else { throw refusal(path, size: Int64(total), cap: cap, code: tooLarge ?? code) }
        return data
    }

    static func refusal<Code>(_ path: String, size: Int64, cap: Int, code: Code) -> ModuleError<Code> {
        ModuleError(code, "\(path) is \(size) bytes, over the \(describe(cap)) cap for this file: refusing to read it")
    }

    /// `1 MiB`, `64 KiB`, or bytes.
    static func describe(_ bytes: Int) -> String {
        if bytes >= 1 << 20, bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
        if bytes >= 1 << 10, bytes % (1 << 10) == 0 { return "\(bytes >> 10) KiB" }
        return "\(bytes) bytes"
    }
}

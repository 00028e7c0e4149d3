import Foundation

/// A whole file mapped into memory: bases, patches and patch results are read and written
/// through the page cache, not copied into the heap.
///
/// Mapped pages count in the process's resident set while they are mapped in;
/// ``release(upTo:)`` drops them from this process (they stay in the page cache, written
/// pages included), so a pass over a large file keeps only what it touched lately.
final class MappedFile {
    let path: String
    let count: Int
    private let address: UnsafeMutableRawPointer?

    /// Maps `path` read-only, refusing files larger than `cap` bytes.
    init(_ path: String, cap: Int64) throws(DeltaError) {
        self.path = path
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { throw DeltaError(.io, "cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { throw DeltaError(.io, "\(path) is not a regular file") }
        guard Int64(st.st_size) <= cap else { throw DeltaError(.outputTooLarge, "\(path) is \(st.st_size) bytes, over the cap of \(cap)") }
        count = Int(st.st_size)
        address = try Self.map(fd, count: count, protection: PROT_READ, flags: MAP_PRIVATE, path: path)
    }

    /// Creates the new file `path` (it must not exist) of exactly `size` bytes, with its
    /// disk blocks reserved first (a full disk fails here, not as a fault while writing),
    /// and maps it shared and writable: what is written to ``mutableBytes`` is the file.
    init(creating path: String, size: Int64) throws(DeltaError) {
        self.path = path
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard fd >= 0 else { throw DeltaError(.io, "cannot create \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        count = Int(max(size, 0))
        if count > 0 {
            let status = posix_fallocate(fd, 0, off_t(count))
            guard status == 0 else {
                unlink(path)
                throw DeltaError(.io, "cannot reserve \(count) bytes for \(path): \(String(cString: strerror(status)))")
            }
        }
        do {
            address = try Self.map(fd, count: count, protection: PROT_READ | PROT_WRITE, flags: MAP_SHARED, path: path)
        } catch {
            unlink(path)
            throw error
        }
    }

    private static func map(_ fd: Int32, count: Int, protection: Int32, flags: Int32, path: String) throws(DeltaError)
        -> UnsafeMutableRawPointer?
    {
        guard count > 0 else { return nil }
        let p = mmap(nil, count, protection, flags, fd, 0)
        guard let p, p != MAP_FAILED else { throw DeltaError(.io, "cannot map \(path): \(String(cString: strerror(errno)))") }
        return p
    }

    deinit { if let address { munmap(address, count) } }

    /// The file's bytes, valid while `self` lives.
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: address, count: count) }

    /// The file's bytes for writing (only for a file mapped with ``init(creating:size:)``).
    var mutableBytes: UnsafeMutableRawBufferPointer { UnsafeMutableRawBufferPointer(start: address, count: count) }

    /// Unmaps the pages of the first `end` bytes (whole pages only) from this process; a
    /// later access maps them in again from the page cache or the file. Written pages of a
    /// shared mapping stay in the page cache to be written back: nothing is lost.
    func release(upTo end: Int) {
        guard let address else { return }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let length = min(end, count) / page * page
        if length > 0 { madvise(address, length, MADV_DONTNEED) }
    }
}

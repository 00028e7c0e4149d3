import Foundation

/// A whole file mapped read-only: bases and patches are read through the page cache, not
/// copied into the heap.
final class MappedFile {
    let path: String
    let count: Int
    private let address: UnsafeMutableRawPointer?

    /// Maps `path`, refusing files larger than `cap` bytes.
    init(_ path: String, cap: Int64) throws(DeltaError) {
        self.path = path
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { throw DeltaError(.io, "cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { throw DeltaError(.io, "\(path) is not a regular file") }
        guard Int64(st.st_size) <= cap else { throw DeltaError(.outputTooLarge, "\(path) is \(st.st_size) bytes, over the cap of \(cap)") }
        count = Int(st.st_size)
        guard count > 0 else {
            address = nil
            return
        }
        let p = mmap(nil, count, PROT_READ, MAP_PRIVATE, fd, 0)
        guard let p, p != MAP_FAILED else { throw DeltaError(.io, "cannot map \(path): \(String(cString: strerror(errno)))") }
        address = p
    }

    deinit { if let address { munmap(address, count) } }

    /// The file's bytes, valid while `self` lives.
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: address, count: count) }
}

import ClientFoundation
import Foundation

/// The lines of a trail file, read one at a time with read(2): never more than one line
/// (at most ``AuditTrail/maxLineBytes``) and one chunk in memory, however long the trail.
struct TrailLines {
    /// One line of the file.
    enum Line {
        /// A line and its newline; the bytes exclude the newline.
        case whole([UInt8])
        /// The last bytes of the file, with no newline after them.
        case unterminated([UInt8])
        /// A line longer than ``AuditTrail/maxLineBytes``; reading stops there.
        case tooLong
    }

    private let fd: Int32
    private let path: String
    private var buffer: [UInt8] = []
    private var start = 0
    private var atEnd = false
    private var stopped = false

    /// Reads from `fd` (which the caller owns and closes) at its current offset.
    init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
    }

    /// The next line, or nil after the last.
    mutating func next() throws(AuditTrailError) -> Line? {
        guard !stopped else { return nil }
        var searched = start
        while true {
            if let newline = buffer[searched...].firstIndex(of: 0x0A) {
                let line = Array(buffer[start..<newline])
                start = newline + 1
                guard line.count <= AuditTrail.maxLineBytes else { return stop(.tooLong) }
                return .whole(line)
            }
            searched = buffer.count
            if buffer.count - start > AuditTrail.maxLineBytes { return stop(.tooLong) }
            if atEnd {
                guard start < buffer.count else { return stop(nil) }
                return stop(.unterminated(Array(buffer[start...])))
            }
            if start > 0 {
                buffer.removeFirst(start)
                searched -= start
                start = 0
            }
            try fill()
        }
    }

    private mutating func stop(_ line: Line?) -> Line? {
        stopped = true
        return line
    }

    private mutating func fill() throws(AuditTrailError) {
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw AuditTrailError(.io, "cannot read \(path): \(String(cString: strerror(errno)))", underlying: POSIXErrorBox(code: errno))
            }
            if n == 0 { atEnd = true } else { buffer.append(contentsOf: chunk[0..<n]) }
            return
        }
    }
}

/// Opening a trail file: a regular file, never through a symbolic link, never blocking
/// on a FIFO planted in its place.
enum TrailFile {
    /// A descriptor open for reading, or nil when the file does not exist.
    static func openForReading(_ path: String) throws(AuditTrailError) -> Int32? {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw failure("cannot read", path, errno)
        }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw AuditTrailError(.io, "\(path) is not a regular file")
        }
        return fd
    }

    /// A descriptor open for appending, the file created (0600) when absent, and whether
    /// it was created.
    static func openForAppending(_ path: String) throws(AuditTrailError) -> (fd: Int32, created: Bool) {
        var created = false
        var fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        if fd < 0, errno == ENOENT {
            fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_CREAT | O_EXCL, 0o600)
            created = fd >= 0
            // Another appender created it between the two opens.
            if fd < 0, errno == EEXIST { fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK) }
        }
        guard fd >= 0 else {
            if errno == ELOOP { throw AuditTrailError(.io, "\(path) is a symbolic link: give the trail's own path") }
            if errno == ENOENT { throw AuditTrailError(.notFound, "cannot create \(path): its folder does not exist") }
            throw failure("cannot open", path, errno)
        }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw AuditTrailError(.io, "\(path) is not a regular file")
        }
        return (fd, created)
    }

    /// The error of a failed system call on `path`.
    static func failure(_ what: String, _ path: String, _ code: Int32) -> AuditTrailError {
        AuditTrailError(.io, "\(what) \(path): \(String(cString: strerror(code)))", underlying: POSIXErrorBox(code: code))
    }
}

internal import CArchive
import ClientFoundation
import Foundation

/// Creates the staging folder and everything inside it relative to directory
/// descriptors: `mkdirat`/`openat` with `O_NOFOLLOW`, files with `O_CREAT | O_EXCL`, so
/// nothing can be written outside the folder even if something raced to plant a link.
/// Files get mode 0644 and folders 0755 whatever the archive says.
final class StagingWriter {
    let path: String
    private let rootFD: Int32
    /// Open folder descriptors by relative path ("" is the staging root); bounded.
    private var folders: [String: Int32] = [:]
    private static let maxOpenFolders = 64

    /// Creates `path` (which must not exist; its parent must) as a fresh, empty folder.
    init(creating path: String) throws(ExtractionError) {
        let url = URL(fileURLWithPath: path)
        let name = url.lastPathComponent
        let parent = url.deletingLastPathComponent().path
        guard !name.isEmpty, name != ".", name != ".." else {
            throw ExtractionError(.io, "invalid staging folder \(path)")
        }
        let parentFD = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard parentFD >= 0 else { throw Self.ioError("cannot open folder \(parent)", errno) }
        defer { close(parentFD) }
        guard mkdirat(parentFD, name, 0o755) == 0 else {
            let code = errno
            if code == EEXIST { throw ExtractionError(.alreadyExists, "staging folder \(path) exists already") }
            throw Self.ioError("cannot create staging folder \(path)", code)
        }
        let fd = openat(parentFD, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            unlinkat(parentFD, name, AT_REMOVEDIR)
            throw Self.ioError("cannot open staging folder \(path)", code)
        }
        fchmod(fd, 0o755)
        self.path = path
        self.rootFD = fd
        folders[""] = fd
    }

    deinit { closeAll(keepRoot: false) }

    /// Creates the folder at `components` (and missing parents).
    func makeDirectory(_ components: [String], entry: [UInt8]) throws(ExtractionError) {
        _ = try folder(components[...], entry: entry)
    }

    /// Creates a new file (0644) and returns its open descriptor; parents are created.
    func createFile(_ components: [String], entry: [UInt8]) throws(ExtractionError) -> Int32 {
        guard let name = components.last else { throw ExtractionError(.internalError, entryName: entry, "empty file path") }
        let parent = try folder(components.dropLast(), entry: entry)
        let fd = openat(parent, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw Self.ioError("cannot create file", errno, entry) }
        fchmod(fd, 0o644)
        return fd
    }

    /// Makes everything written durable and closes it all: one `syncfs` on the staging
    /// folder's file system flushes every file and folder written (cheaper than an
    /// `fsync` per file and reporting write-back errors since Linux 5.8), then an `fsync`
    /// of every folder still open, the staging root included.
    func finish() throws(ExtractionError) {
        guard clientctl_syncfs(rootFD) == 0 else { throw Self.ioError("cannot sync staging folder \(path)", errno) }
        for fd in folders.values where fsync(fd) != 0 {
            throw Self.ioError("cannot fsync a folder in \(path)", errno)
        }
        closeAll(keepRoot: false)
    }

    /// Closes everything and removes the staging folder with all it holds.
    func discard() {
        closeAll(keepRoot: false)
        try? AtomicFile.removeTree(path)
    }

    private func folder(_ components: ArraySlice<String>, entry: [UInt8]) throws(ExtractionError) -> Int32 {
        let key = components.joined(separator: "/")
        if let fd = folders[key] { return fd }
        guard let name = components.last else { return rootFD }
        let parent = try folder(components.dropLast(), entry: entry)
        if mkdirat(parent, name, 0o755) != 0, errno != EEXIST {
            throw Self.ioError("cannot create folder", errno, entry)
        }
        let fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw Self.ioError("cannot open folder", errno, entry) }
        fchmod(fd, 0o755)
        if folders.count >= Self.maxOpenFolders {
            // Parents of `key` may be among those closed; they are reopened on demand.
            closeAll(keepRoot: true)
        }
        folders[key] = fd
        return fd
    }

    private func closeAll(keepRoot: Bool) {
        for (key, fd) in folders where !(keepRoot && key.isEmpty) { close(fd) }
        folders = keepRoot ? ["": rootFD] : [:]
    }

    static func ioError(_ what: String, _ code: Int32, _ entry: [UInt8]? = nil) -> ExtractionError {
        let reason = "\(what): \(String(cString: strerror(code)))"
        if let entry { return ExtractionError(.io, entryName: entry, reason) }
        return ExtractionError(.io, reason)
    }
}

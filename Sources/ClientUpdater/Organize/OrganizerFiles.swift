import ClientFoundation
import Foundation

/// File-system helpers of the ``Organizer``: URL path mapping, reading and writing (linking
/// and copying are ``FilePlacement``'s).
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

    /// An index page's bytes, at most ``Organizer/maxPageBytes``.
    static func readPage(_ path: String) throws -> Data {
        guard let data = try BoundedFile.read(path, cap: Organizer.maxPageBytes, code: UpdaterError.Code.notFound, tooLarge: .tooLarge) else {
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
}

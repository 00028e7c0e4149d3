import ClientFoundation
import ClientUpdater
import Foundation
import Synchronization

/// Our own record of what a download folder holds: the SHA-256 of the bytes actually
/// stored for each file, appended when the file lands in `meteor/Downloading/`.
///
/// A Meteor manifest `hash` is not a digest of the bytes (see ``AssetFetcher``), so after
/// an interrupted download it cannot tell whether a leftover file in `PartialDownload/` is
/// intact. This record can: a leftover is reused only when its bytes still hash to the
/// value recorded when it was stored. The file is `.clientctl-integrity` inside the
/// download folder, one line per file: `<sha256 hex> <file path>`; it is removed before
/// the folder becomes `meteor/<version>`.
final class IntegrityRecord: Sendable {
    // The descriptor is only used under its Mutex; assets finish concurrently.
    /// The record's file name inside a download folder.
    static let fileName = ".clientctl-integrity"

    private let path: String
    /// The record's descriptor, -1 once closed.
    private let fd: Mutex<Int32>

    /// Opens (creating) the record of `folder` for appending.
    init(folder: String) throws {
        path = folder + "/" + Self.fileName
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0o644)
        self.fd = Mutex(fd)
        guard fd >= 0 else { throw MeteorError(.io, "cannot open \(path): \(String(cString: strerror(errno)))") }
    }

    deinit { close() }

    /// Appends that `filePath` (relative to the folder) holds bytes with this SHA-256.
    func append(filePath: String, sha256: String) throws {
        let line = Data("\(sha256) \(filePath)\n".utf8)
        try fd.withLock { fd in
            guard fd >= 0 else { return }
            try AtomicFile.writeAll(fd: fd, data: line, path: path)
        }
    }

    /// fsyncs and closes the record.
    func close() {
        fd.withLock { fd in
            guard fd >= 0 else { return }
            fsync(fd)
            Foundation.close(fd)
            fd = -1
        }
    }

    /// The recorded SHA-256 per file path of `folder` (empty when there is no record or it
    /// is unreadable). A later line for the same path wins; malformed lines are ignored.
    static func read(folder: String, maxBytes: Int = 64 << 20) -> [String: String] {
        let path = folder + "/" + fileName
        var st = stat()
        guard lstat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG,
            let data = try? BoundedFile.read(path, cap: maxBytes, code: MeteorError.Code.io)
        else { return [:] }
        var result: [String: String] = [:]
        for line in data.split(separator: 0x0A) {
            guard line.count > 65, line[line.startIndex + 64] == 0x20 else { continue }
            let digest = String(decoding: line.prefix(64), as: UTF8.self)
            guard LowerHex.matches(digest.utf8) else { continue }
            result[String(decoding: line.dropFirst(65), as: UTF8.self)] = digest
        }
        return result
    }

    /// True when the file at `file` still has the SHA-256 recorded for it.
    static func matches(_ file: String, recorded: String?) -> Bool {
        guard let recorded else { return false }
        return (try? Digest.hex(.sha256, ofFileAt: file)) == recorded
    }
}

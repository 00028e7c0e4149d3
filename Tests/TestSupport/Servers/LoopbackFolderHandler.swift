import ClientFoundation
import ClientUpdater
import Foundation
import Synchronization

extension LoopbackHTTPServer {
    /// How ``folder(_:etag:)`` computes `ETag`s.
    public enum ETagStyle: Sendable {
        /// No `ETag` header (conditional requests are then always answered in full).
        case none
        /// `"<size>-<mtime ns>"`, like most static servers.
        case sizeAndTime
        /// `"<sha1 hex of the bytes>"`, like Meteor's server.
        case sha1
        /// `"<sha256 hex of the bytes>"`.
        case sha256
    }

    /// A handler serving the files under `root` by URL path, as a static web server would.
    ///
    /// GET and HEAD; `ETag` + `If-None-Match` → 304; a single `Range: bytes=a-b`,
    /// `bytes=a-` or `bytes=-n` → 206 with `Content-Range` (416 when unsatisfiable, ignored
    /// when `If-Range` does not match); `Content-Length` always. A folder serves its
    /// `index.html`. Paths with `..` or outside `root`: 404. Bodies are streamed from disk.
    public static func folder(_ root: String, etag style: ETagStyle = .sizeAndTime) -> Handler {
        let cache = DigestCache()
        return { request in
            guard request.method == "GET" || request.method == "HEAD" else {
                var r = LoopbackResponse.status(405)
                r.setHeader("Allow", "GET, HEAD")
                return r
            }
            guard let path = resolve(root: root, urlPath: request.path) else { return .status(404) }
            var st = stat()
            guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return .status(404) }
            let size = Int64(st.st_size)
            let mtimeNS = Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec)
            let etag: String?
            switch style {
            case .none: etag = nil
            case .sizeAndTime: etag = "\"\(size)-\(mtimeNS)\""
            case .sha1: etag = cache.etag(path: path, size: size, mtime: mtimeNS, algorithm: .sha1)
            case .sha256: etag = cache.etag(path: path, size: size, mtime: mtimeNS, algorithm: .sha256)
            }
            var headers: [(String, String)] = [("Content-Type", contentType(path)), ("Accept-Ranges", "bytes")]
            if let etag { headers.append(("ETag", etag)) }

            if let etag, let inm = request[header: "if-none-match"], matches(inm, etag) {
                return LoopbackResponse(status: 304, headers: headers.filter { $0.0 == "ETag" })
            }
            let rangeAllowed = request[header: "if-range"].map { $0 == etag } ?? true
            if rangeAllowed, let spec = request[header: "range"] {
                switch parseRange(spec, size: size) {
                case .ignore: break
                case .unsatisfiable:
                    var r = LoopbackResponse.status(416)
                    r.setHeader("Content-Range", "bytes */\(size)")
                    return r
                case .range(let start, let end):
                    headers.append(("Content-Range", "bytes \(start)-\(end)/\(size)"))
                    return LoopbackResponse(
                        status: 206, headers: headers,
                        body: .file(path: path, offset: start, length: end - start + 1))
                }
            }
            return LoopbackResponse(status: 200, headers: headers, body: .file(path: path, offset: 0, length: size))
        }
    }

    /// The file under `root` for a decoded URL path, or nil when it would escape `root`.
    static func resolve(root: String, urlPath: String) -> String? {
        let parts = urlPath.split(separator: "/", omittingEmptySubsequences: true)
        for part in parts where part == ".." || part == "." || part.contains("\0") { return nil }
        var path = parts.reduce(root) { $0 + "/" + $1 }
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDir), isDir.boolValue {
            path += "/index.html"
        }
        return path
    }

    static func matches(_ ifNoneMatch: String, _ etag: String) -> Bool {
        if ifNoneMatch.trimmingCharacters(in: .whitespaces) == "*" { return true }
        let weakless = { (s: Substring) -> String in
            let t = s.trimmingCharacters(in: .whitespaces)
            return t.hasPrefix("W/") ? String(t.dropFirst(2)) : t
        }
        return ifNoneMatch.split(separator: ",").contains { weakless($0) == weakless(etag[...]) }
    }

    enum RangeSpec: Equatable {
        case ignore
        case unsatisfiable
        case range(Int64, Int64)
    }

    /// Parses a single byte range (multi-range requests are answered in full).
    static func parseRange(_ spec: String, size: Int64) -> RangeSpec {
        guard spec.hasPrefix("bytes="), !spec.contains(",") else { return .ignore }
        let parts = spec.dropFirst(6).split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return .ignore }
        let a = parts[0].trimmingCharacters(in: .whitespaces)
        let b = parts[1].trimmingCharacters(in: .whitespaces)
        if a.isEmpty {
            guard let suffix = Int64(b), suffix > 0 else { return size == 0 ? .unsatisfiable : .ignore }
            guard size > 0 else { return .unsatisfiable }
            return .range(max(0, size - suffix), size - 1)
        }
        guard let start = Int64(a), start >= 0 else { return .ignore }
        guard start < size else { return .unsatisfiable }
        if b.isEmpty { return .range(start, size - 1) }
        guard let end = Int64(b), end >= start else { return .ignore }
        return .range(start, min(end, size - 1))
    }

    static func contentType(_ path: String) -> String {
        switch (path as NSString).pathExtension.lowercased() {
        case "json": return "application/json"
        case "html", "htm": return "text/html; charset=utf-8"
        case "js": return "application/javascript"
        case "css": return "text/css"
        case "map": return "application/json"
        case "gz", "tgz": return "application/gzip"
        case "zip": return "application/zip"
        case "txt": return "text/plain"
        case "pem": return "application/x-pem-file"
        default: return "application/octet-stream"
        }
    }
}

/// Remembers content-hash ETags per (path, size, mtime) so big files are hashed once.
final class DigestCache: Sendable {
    private let entries = Mutex<[String: String]>([:])

    func etag(path: String, size: Int64, mtime: Int64, algorithm: Digest.Algorithm) -> String? {
        let key = "\(algorithm == .sha1 ? 1 : 256)|\(size)|\(mtime)|\(path)"
        if let hit = entries.withLock({ $0[key] }) { return hit }
        guard let hex = try? Digest.hex(algorithm, ofFileAt: path) else { return nil }
        let tag = "\"\(hex)\""
        entries.withLock { $0[key] = tag }
        return tag
    }
}

import ClientUpdater
import Foundation
import NIOCore

/// A request for a served file as every front end sees it: `serve`'s HTTP server and the
/// native shell's URI scheme both turn theirs into this, and both answer with the one
/// ``FileAnswer`` the serving core computes (docs/serving.md).
package struct FileRequest: Sendable {
    /// The path as it came, still percent-encoded (`/a%20b.js`).
    package var path: String
    /// The query string without `?`, when there is one.
    package var query: String?
    /// `HEAD`: the headers of a `GET` without its body.
    package var isHead: Bool
    package var ifNoneMatch: String?
    package var range: String?
    package var ifRange: String?

    package init(path: String, query: String? = nil, isHead: Bool = false, ifNoneMatch: String? = nil, range: String? = nil, ifRange: String? = nil) {
        self.path = path
        self.query = query
        self.isHead = isHead
        self.ifNoneMatch = ifNoneMatch
        self.range = range
        self.ifRange = ifRange
    }
}

/// What the serving core answers: a status, headers in order, and a body that is nothing,
/// bytes already in memory, or a byte range of a checked file to stream.
package struct FileAnswer: Sendable {
    package enum Body: Sendable {
        case none
        case bytes(ByteBuffer)
        /// `range` of the regular file at `path`, which must still be `size` bytes long.
        case file(path: String, size: Int64, range: ClosedRange<Int64>)
    }

    package var status: Int
    package var headers: [(name: String, value: String)]
    package var body: Body
    /// The version that answered (nil when none is served).
    package var version: String?
    /// The answer is an HTML file's, whole or not modified (`200` or `304`): a page, whose
    /// version a host records as its document's.
    package var isPage = false

    package init(status: Int, headers: [(name: String, value: String)], body: Body = .none, version: String? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.version = version
    }

    /// The first value of header `name` (case-insensitive).
    package func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// The number of body bytes (the `Content-Length` of a `GET`).
    package var bodyLength: Int64 {
        switch body {
        case .none: return 0
        case .bytes(let buffer): return Int64(buffer.readableBytes)
        case .file(_, _, let range): return range.upperBound - range.lowerBound + 1
        }
    }

    static func plain(_ status: Int, _ text: String, version: String? = nil) -> FileAnswer {
        FileAnswer(
            status: status, headers: [("Content-Type", "text/plain; charset=utf-8"), ("Cache-Control", "no-cache")],
            body: .bytes(ByteBuffer(string: text)), version: version)
    }
}

extension FileAnswer {
    /// Opens the file of a ``Body/file(path:size:range:)`` body through the serving checks
    /// (no symlink, no FIFO, still its listed size), positioned at `range`'s start, off
    /// the cooperative pool. The caller owns the descriptor.
    package static func openFile(path: String, size: Int64, at offset: Int64) async throws -> Int32 {
        try await SafeFileReader.offPool {
            let fd = try SafeFileReader.open(path, expectedSize: size)
            guard lseek(fd, off_t(offset), SEEK_SET) == offset else {
                let code = errno
                close(fd)
                throw ServingError.io("cannot seek in", path: path, errno: code)
            }
            return fd
        }
    }

    /// Reads `range` of the file of a ``Body/file(path:size:range:)`` body through the
    /// same checks, off the cooperative pool.
    package static func readFile(path: String, size: Int64, range: ClosedRange<Int64>) async throws -> ByteBuffer {
        try await SafeFileReader.offPool {
            let fd = try SafeFileReader.open(path, expectedSize: size)
            defer { close(fd) }
            return try SafeFileReader.read(fd, path: path, offset: range.lowerBound, count: Int(range.upperBound - range.lowerBound + 1))
        }
    }
}

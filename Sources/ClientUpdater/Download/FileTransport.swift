import Foundation

/// `file:` URLs for the transports: the file is read from disk in chunks and
/// answered with a synthetic HTTP head.
///
/// 200 with `Content-Length` (or 206 with `Content-Range` for a `Range: bytes=N-`
/// request, so resuming works the same as over HTTP); 404 when the file is missing, 403
/// when it cannot be read, 400 for a folder. HTTP transports hand `file:` URLs to it.
public enum FileTransport {
    static let chunkSize = 256 * 1024

    /// Reads the file named by `request.url` and streams it like a GET: `head` first, then
    /// `sink` chunk by chunk.
    public static func get(
        _ request: TransportRequest, head: (TransportResponse) throws -> Void,
        sink: (UnsafeRawBufferPointer) throws -> Void
    ) throws -> TransportResponse {
        let path = request.url.path
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            let status = code == ENOENT || code == ENOTDIR ? 404 : 403
            return try answer(TransportResponse(status: status, headers: ["x-file-error": String(cString: strerror(code))]), head)
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw UpdaterError.io("cannot stat", path: path, errno: errno) }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            return try answer(TransportResponse(status: 400, headers: ["x-file-error": "not a regular file"]), head)
        }
        let size = Int64(st.st_size)
        var start: Int64 = 0
        var status = 200
        var headers = ["content-length": String(size)]
        if let range = request.headers.first(where: { $0.key.lowercased() == "range" })?.value,
            range.hasPrefix("bytes="), range.hasSuffix("-"), let from = Int64(range.dropFirst(6).dropLast()), from >= 0
        {
            guard from < size else {
                return try answer(TransportResponse(status: 416, headers: ["content-range": "bytes */\(size)"]), head)
            }
            start = from
            status = 206
            headers = ["content-length": String(size - from), "content-range": "bytes \(from)-\(size - 1)/\(size)"]
        }
        let response = TransportResponse(status: status, headers: headers)
        try head(response)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        var offset = start
        while true {
            let n = pread(fd, buffer.baseAddress, chunkSize, off_t(offset))
            if n < 0 {
                if errno == EINTR { continue }
                throw UpdaterError.io("cannot read", path: path, errno: errno)
            }
            if n == 0 { break }
            try sink(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
            offset += Int64(n)
        }
        return response
    }

    private static func answer(_ response: TransportResponse, _ head: (TransportResponse) throws -> Void) throws -> TransportResponse {
        try head(response)
        return response
    }
}

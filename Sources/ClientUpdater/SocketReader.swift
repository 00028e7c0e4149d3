import Foundation

/// Blocking, idle-timed I/O on a connected socket for ``SocketHTTPExchange``: sends the
/// request, parses the response head, frames and streams the body.
final class SocketReader {
    private let fd: Int32
    private let url: URL
    private let idleTimeout: Double
    private let buffer: UnsafeMutableRawBufferPointer
    /// Bytes received but not consumed yet (after the head, or inside chunked framing).
    private var pending: [UInt8] = []
    private var pendingStart = 0
    static let maxHead = 64 * 1024

    init(fd: Int32, url: URL, idleTimeout: Double, bufferSize: Int) {
        self.fd = fd
        self.url = url
        self.idleTimeout = idleTimeout
        buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bufferSize, alignment: 16)
    }

    deinit { buffer.deallocate() }

    private var timeoutMS: Int32 { Int32(min(max(idleTimeout, 0.001) * 1000, Double(Int32.max))) }

    private func fail(_ failure: TransportFailure) -> UpdaterError { UpdaterError.network(url, failure) }

    // MARK: - Raw I/O

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            let ready = poll(&pfd, 1, timeoutMS)
            if ready < 0 && errno == EINTR { continue }
            if ready == 0 { throw fail(.timedOut(seconds: idleTimeout)) }
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress?.advanced(by: offset), bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw fail(SocketHTTPExchange.failure(errno))
            }
            offset += n
        }
    }

    /// Receives into `buffer`; 0 at end of stream.
    private func receive(max count: Int) throws -> Int {
        while true {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pfd, 1, timeoutMS)
            if ready < 0 && errno == EINTR { continue }
            if ready == 0 { throw fail(.timedOut(seconds: idleTimeout)) }
            let n = recv(fd, buffer.baseAddress, min(count, buffer.count), 0)
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw fail(SocketHTTPExchange.failure(errno))
            }
            return n
        }
    }

    /// Appends received bytes to `pending`; false at end of stream.
    private func fillPending() throws -> Bool {
        if pendingStart > 0 && pendingStart == pending.count {
            pending.removeAll(keepingCapacity: true)
            pendingStart = 0
        }
        let n = try receive(max: buffer.count)
        if n == 0 { return false }
        pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
        return true
    }

    private var available: Int { pending.count - pendingStart }

    // MARK: - Head

    func readHead() throws -> TransportResponse {
        var scanFrom = pendingStart
        while true {
            if let end = findBlankLine(from: scanFrom) {
                let headBytes = pending[pendingStart..<end]
                pendingStart = end + 4
                return try parseHead(headBytes)
            }
            scanFrom = max(pendingStart, pending.count - 3)
            guard available < Self.maxHead else { throw fail(.other("response head larger than \(Self.maxHead) bytes")) }
            guard try fillPending() else {
                throw fail(available == 0 ? .reset : .other("connection closed inside the response head"))
            }
        }
    }

    private func findBlankLine(from start: Int) -> Int? {
        var i = max(start, pendingStart)
        while i + 3 < pending.count {
            if pending[i] == 13 && pending[i + 1] == 10 && pending[i + 2] == 13 && pending[i + 3] == 10 { return i }
            i += 1
        }
        return nil
    }

    private func parseHead(_ bytes: ArraySlice<UInt8>) throws -> TransportResponse {
        let text = String(decoding: bytes, as: UTF8.self)
        var lines = text.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ", maxSplits: 2)
        guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/1."), let status = Int(statusLine[1]),
              (100...999).contains(status) else {
            throw fail(.other("malformed HTTP status line"))
        }
        var headers: [String: String] = [:]
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { throw fail(.other("malformed HTTP header line")) }
            let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers[name] = headers[name].map { $0 + ", " + value } ?? value
        }
        return TransportResponse(status: status, headers: headers)
    }

    // MARK: - Body

    func readBody(of response: TransportResponse, sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        if response.status == 204 || response.status == 304 || response.status < 200 { return }
        if response[header: "transfer-encoding"]?.lowercased().contains("chunked") == true {
            return try readChunked(sink: sink)
        }
        if let text = response[header: "content-length"] {
            guard let length = Int64(text.trimmingCharacters(in: .whitespaces)), length >= 0 else {
                throw fail(.other("malformed Content-Length \(text)"))
            }
            return try readExactly(length, sink: sink)
        }
        try readToEnd(sink: sink)
    }

    /// Hands over up to `limit` pending bytes; returns how many.
    private func drainPending(limit: Int64, sink: (UnsafeRawBufferPointer) throws -> Void) throws -> Int64 {
        let count = Int(min(Int64(available), limit))
        guard count > 0 else { return 0 }
        try pending[pendingStart..<(pendingStart + count)].withUnsafeBytes { try sink($0) }
        pendingStart += count
        return Int64(count)
    }

    private func readExactly(_ length: Int64, sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        var received = try drainPending(limit: length, sink: sink)
        while received < length {
            let n = try receive(max: Int(min(Int64(buffer.count), length - received)))
            if n == 0 { throw fail(.truncated(received: received, expected: length)) }
            try sink(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
            received += Int64(n)
        }
    }

    private func readToEnd(sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        _ = try drainPending(limit: Int64.max, sink: sink)
        while true {
            let n = try receive(max: buffer.count)
            if n == 0 { return }
            try sink(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
        }
    }

    private func readChunked(sink: (UnsafeRawBufferPointer) throws -> Void) throws {
        var received: Int64 = 0
        while true {
            let sizeLine = try readLine()
            let hex = sizeLine.split(separator: ";", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            guard !hex.isEmpty, hex.count <= 15, let size = Int64(hex, radix: 16) else {
                throw fail(.other("malformed chunk size"))
            }
            if size == 0 {
                while try !readLine().isEmpty {}  // trailers
                return
            }
            var left = size
            while left > 0 {
                if available == 0 {
                    guard try fillPending() else { throw fail(.truncated(received: received, expected: received + left)) }
                }
                let n = try drainPending(limit: left, sink: sink)
                left -= n
                received += n
            }
            guard try readLine().isEmpty else { throw fail(.other("malformed chunk end")) }
        }
    }

    /// Reads one CRLF-terminated line from the pending bytes (at most 8 KiB).
    private func readLine() throws -> String {
        while true {
            var i = pendingStart
            while i + 1 < pending.count {
                if pending[i] == 13 && pending[i + 1] == 10 {
                    let line = String(decoding: pending[pendingStart..<i], as: UTF8.self)
                    pendingStart = i + 2
                    return line
                }
                i += 1
            }
            guard available < 8192 else { throw fail(.other("chunk line too long")) }
            guard try fillPending() else { throw fail(.other("connection closed inside chunked framing")) }
        }
    }
}

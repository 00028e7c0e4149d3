import Foundation

/// A response read off the wire by ``LoopbackHTTP``.
public struct HTTPResult: Sendable {
    public var status: Int
    /// Header names lowercased; repeated headers joined with ", ".
    public var headers: [String: String]
    public var body: Data
    public var text: String { String(decoding: body, as: UTF8.self) }
    public subscript(_ name: String) -> String? { headers[name.lowercased()] }
}

/// A deliberately small HTTP/1.1 client over a raw socket to 127.0.0.1, so tests see
/// exactly what the server sent (no caching, no header rewriting). Blocking I/O runs on
/// a Dispatch thread, never on the cooperative pool the server needs.
public enum LoopbackHTTP {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        public init(description: String) { self.description = description }
    }

    /// One request on a connection of its own; a POST sends `body` (UTF-8 text), else nothing.
    public static func request(
        port: Int, _ target: String, method: String = "GET", headers: [String: String] = [:], body: String = ""
    ) async throws -> HTTPResult {
        try await offload {
            let fd = try connect(port: port)
            defer { close(fd) }
            let merged = headers.merging(["Connection": "close"]) { a, _ in a }
            try send(fd, head(method, target, port: port, headers: merged, bodyBytes: body.utf8.count) + body)
            return try parse(try readToEnd(fd), isHead: method == "HEAD")
        }
    }

    public static func head(_ method: String, _ target: String, port: Int, headers: [String: String], bodyBytes: Int = 0) -> String {
        var text = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
        for (k, v) in headers.sorted(by: { $0.key < $1.key }) { text += "\(k): \(v)\r\n" }
        if method == "POST" { text += "Content-Length: \(bodyBytes)\r\n" }
        return text + "\r\n"
    }

    public static func connect(port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket failed") }
        var timeout = timeval(tv_sec: 60, tv_usec: 0)  // generous: a loaded 2-core CI machine
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let ok = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard ok == 0 else {
            close(fd)
            throw Failure(description: "connect to 127.0.0.1:\(port) failed: errno \(errno)")
        }
        return fd
    }

    public static func send(_ fd: Int32, _ text: String) throws {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { throw Failure(description: "write failed") }
            offset += n
        }
    }

    public static func parse(_ data: Data, isHead: Bool) throws -> HTTPResult {
        let bytes = [UInt8](data)
        guard let split = bytes.firstRange(of: Array("\r\n\r\n".utf8)) else { throw Failure(description: "no response head in \(bytes.count) bytes") }
        let headText = String(decoding: bytes[..<split.lowerBound], as: UTF8.self)
        var lines = headText.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw Failure(description: "bad status line") }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers[name] = headers[name].map { $0 + ", " + value } ?? value
        }
        var body = Array(bytes[split.upperBound...])
        if headers["transfer-encoding"]?.contains("chunked") == true { body = try dechunk(body) }
        if isHead, !body.isEmpty { throw Failure(description: "HEAD response carried \(body.count) body bytes") }
        return HTTPResult(status: status, headers: headers, body: Data(body))
    }

    public static func dechunk(_ bytes: [UInt8]) throws -> [UInt8] {
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            guard let lineEnd = bytes[i...].firstRange(of: Array("\r\n".utf8)) else { break }
            let sizeText = String(decoding: bytes[i..<lineEnd.lowerBound], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16) else { throw Failure(description: "bad chunk size") }
            if size == 0 { break }
            let start = lineEnd.upperBound
            guard start + size <= bytes.count else { throw Failure(description: "truncated chunk") }
            out.append(contentsOf: bytes[start..<(start + size)])
            i = start + size + 2
        }
        return out
    }

    public static func offload<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await TestSupport.offload(work)
    }

    /// Sends `head` (its request line and headers, without the blank line) with
    /// `Connection: close` and `body`, and reads the whole answer: for heads no other
    /// client would send (a foreign `Host`, an `Upgrade`).
    public static func raw(port: Int, _ head: String, body: String = "") async throws -> HTTPResult {
        try await offload {
            let fd = try connect(port: port)
            defer { close(fd) }
            var text = head + "Connection: close\r\n"
            if !body.isEmpty || head.hasPrefix("POST") { text += "Content-Length: \(body.utf8.count)\r\n" }
            try send(fd, text + "\r\n" + body)
            return try parse(try readToEnd(fd), isHead: false)
        }
    }

    /// Reads `fd` until the peer closes it.
    static func readToEnd(_ fd: Int32) throws -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(fd, &buffer, buffer.count)
            if n < 0 {
                if errno == EINTR { continue }
                throw Failure(description: "read failed: errno \(errno)")
            }
            if n == 0 { return data }
            data.append(contentsOf: buffer[0..<n])
        }
    }
}

import Foundation
import TestSupport

/// A response read off the wire by ``LoopbackHTTP``.
struct HTTPResult: Sendable {
    var status: Int
    /// Header names lowercased; repeated headers joined with ", ".
    var headers: [String: String]
    var body: Data
    var text: String { String(decoding: body, as: UTF8.self) }
    subscript(_ name: String) -> String? { headers[name.lowercased()] }
}

/// A deliberately small HTTP/1.1 client over a raw socket to 127.0.0.1, so tests see
/// exactly what the server sent (no caching, no header rewriting). Blocking I/O runs on
/// a Dispatch thread, never on the cooperative pool the server needs.
enum LoopbackHTTP {
    struct Failure: Error, CustomStringConvertible { var description: String }

    static func request(port: Int, _ target: String, method: String = "GET", headers: [String: String] = [:]) async throws -> HTTPResult {
        try await offload {
            let fd = try connect(port: port)
            defer { close(fd) }
            try send(fd, head(method, target, port: port, headers: headers.merging(["Connection": "close"]) { a, _ in a }))
            var data = Data()
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let n = read(fd, &buffer, buffer.count)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw Failure(description: "read failed: errno \(errno)")
                }
                if n == 0 { break }
                data.append(contentsOf: buffer[0..<n])
            }
            return try parse(data, isHead: method == "HEAD")
        }
    }

    static func head(_ method: String, _ target: String, port: Int, headers: [String: String]) -> String {
        var text = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
        for (k, v) in headers.sorted(by: { $0.key < $1.key }) { text += "\(k): \(v)\r\n" }
        if method == "POST" { text += "Content-Length: 0\r\n" }
        return text + "\r\n"
    }

    static func connect(port: Int) throws -> Int32 {
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

    static func send(_ fd: Int32, _ text: String) throws {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { throw Failure(description: "write failed") }
            offset += n
        }
    }

    static func parse(_ data: Data, isHead: Bool) throws -> HTTPResult {
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

    static func dechunk(_ bytes: [UInt8]) throws -> [UInt8] {
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

    static func offload<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await TestSupport.offload(work)
    }
}

/// An open server-sent event stream.
final class EventStreamConnection: @unchecked Sendable {
    // Used by one test at a time; `received` is only touched inside `offload` calls made in sequence.
    private let fd: Int32
    private var received = Data()

    init(port: Int, path: String = "/__clientctl/events") async throws {
        // Connect and send the head in one step: the server closes a connection whose head
        // has not come within its header timeout (10 s), and a task resumed between the two on
        // a busy cooperative pool (the full suite on 2 cores) once came back after it.
        fd = try await LoopbackHTTP.offload {
            let fd = try LoopbackHTTP.connect(port: port)
            do {
                try LoopbackHTTP.send(fd, LoopbackHTTP.head("GET", path, port: port, headers: ["Accept": "text/event-stream"]))
            } catch {
                close(fd)
                throw error
            }
            return fd
        }
    }

    deinit { close(fd) }

    /// Reads until everything received so far contains `text`; returns it all.
    func waitFor(_ text: String) async throws -> String {
        try await LoopbackHTTP.offload { [self] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !String(decoding: received, as: UTF8.self).contains(text) {
                let n = read(fd, &buffer, buffer.count)
                if n <= 0 {
                    let why = n == 0 ? "closed by the server" : "read failed: errno \(errno)"
                    throw LoopbackHTTP.Failure(
                        description: "stream ended before \(text.debugDescription) (\(why)): \(String(decoding: received, as: UTF8.self))")
                }
                received.append(contentsOf: buffer[0..<n])
            }
            return String(decoding: received, as: UTF8.self)
        }
    }

    /// Reads until the peer closes the connection; true if it did.
    func waitForClose() async throws -> Bool {
        try await LoopbackHTTP.offload { [self] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = read(fd, &buffer, buffer.count)
                if n == 0 { return true }
                if n < 0 { return false }
            }
        }
    }
}

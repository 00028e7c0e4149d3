// collector-bench's HTTP/1.1 client: one keep-alive connection on a blocking socket, the
// requests' bytes made before the clock starts. A device sends from its own CPU; a load
// generator that builds JSON and runs an HTTP stack while timed takes a good part of the
// 2 cores the collector is measured on, which the floor it is compared with never shares.
import Foundation

/// Why a connection stopped.
struct ClientFailure: Error, CustomStringConvertible {
    let description: String
}

/// One answer: its status and the body's `accepted` and `duplicates` counts.
struct Answer {
    var status: Int
    var accepted: Int
    var duplicates: Int
    var body: String
}

/// One keep-alive HTTP/1.1 connection to 127.0.0.1:`port`.
final class KeepAliveClient {
    private let fd: Int32
    private var buffer = [UInt8](repeating: 0, count: 1 << 16)
    /// Bytes read past the last answer (none while one request is in flight at a time).
    private var pending: [UInt8] = []

    init(port: UInt16) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ClientFailure(description: "socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            throw ClientFailure(description: "connect to 127.0.0.1:\(port): errno \(errno)")
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { close(fd) }

    /// Sends one request (its whole bytes) and reads its answer.
    func exchange(_ request: [UInt8]) throws -> Answer {
        var sent = 0
        while sent < request.count {
            let n = request.withUnsafeBytes { send(fd, $0.baseAddress.map { $0 + sent }, request.count - sent, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw ClientFailure(description: "send: errno \(errno)") }
            sent += n
        }
        return try readAnswer()
    }

    private func readMore() throws {
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { throw ClientFailure(description: n == 0 ? "the collector closed the connection" : "recv: errno \(errno)") }
        pending += buffer[0..<n]
    }

    private func readAnswer() throws -> Answer {
        let end: [UInt8] = Array("\r\n\r\n".utf8)
        var headEnd: Int?
        while headEnd == nil {
            headEnd = Self.find(end, in: pending)
            if headEnd == nil {
                guard pending.count < 1 << 16 else { throw ClientFailure(description: "an answer's head is over 64 KiB") }
                try readMore()
            }
        }
        guard let headEnd else { throw ClientFailure(description: "no head") }
        let head = String(decoding: pending[0..<headEnd], as: UTF8.self)
        let lines = head.split(separator: "\r\n")
        guard let first = lines.first, first.hasPrefix("HTTP/1.1 "), let status = Int(first.dropFirst(9).prefix(3)) else {
            throw ClientFailure(description: "not an HTTP/1.1 answer: \(head.prefix(80))")
        }
        var length: Int?
        for line in lines.dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "content-length" {
                length = Int(parts[1].trimmingCharacters(in: .whitespaces))
            } else if parts.count == 2, parts[0].lowercased() == "transfer-encoding" {
                throw ClientFailure(description: "a chunked answer (this client reads Content-Length only)")
            }
        }
        guard let length, length <= 1 << 20 else { throw ClientFailure(description: "an answer without a Content-Length up to 1 MiB") }
        let bodyStart = headEnd + end.count
        while pending.count < bodyStart + length { try readMore() }
        let body = Array(pending[bodyStart..<(bodyStart + length)])
        pending.removeFirst(bodyStart + length)
        return Answer(
            status: status, accepted: Self.count("accepted", in: body), duplicates: Self.count("duplicates", in: body),
            body: String(decoding: body.prefix(200), as: UTF8.self))
    }

    /// Index of the first `needle` in `haystack`.
    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for i in 0...(haystack.count - needle.count) where haystack[i] == needle[0] {
            if haystack[i..<(i + needle.count)].elementsEqual(needle) { return i }
        }
        return nil
    }

    /// The integer after `"name":` in a JSON body, 0 when there is none.
    private static func count(_ name: String, in body: [UInt8]) -> Int {
        guard let at = find(Array("\"\(name)\":".utf8), in: body) else { return 0 }
        var i = at + name.utf8.count + 3
        while i < body.count, body[i] == UInt8(ascii: " ") { i += 1 }
        var value = 0
        while i < body.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(body[i]) {
            value = value * 10 + Int(body[i] - UInt8(ascii: "0"))
            i += 1
        }
        return value
    }
}

import Foundation
import Synchronization

/// A stand-in collector on 127.0.0.1 for delivery tests: it keeps every request's head and
/// body (the batches a device POSTs) and answers each from a script: a status with headers,
/// after a delay, or no answer at all (the connection closed once the body was read: "the
/// reply was lost after the store committed"). One request per connection.
///
/// LoopbackHTTPServer discards request bodies; this one exists to look at them.
public final class ReportCollectorStub: Sendable {
    /// What the stub does with one request.
    public enum Answer: Sendable {
        /// `200 {"accepted": 0, "duplicates": 0}`.
        case ok
        /// This status, headers and body.
        case status(Int, headers: [String: String] = [:], body: String = "")
        /// Waits, then answers.
        indirect case after(seconds: Double, Answer)
        /// Reads the request, then closes the connection without a word.
        case hangUp
    }

    /// One request received.
    public struct Received: Sendable {
        public let method: String
        public let path: String
        /// Header names lowercased.
        public let headers: [String: String]
        public let body: Data
    }

    private struct State {
        var script: [Answer] = []
        var otherwise: Answer = .ok
        var received: [Received] = []
        var stopped = false
    }

    private let state = Mutex(State())
    private let fd: Int32
    /// The port it listens on.
    public let port: UInt16

    /// Listens on 127.0.0.1 (a free port) and serves until ``stop()``.
    public init() throws {
        let sock = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard sock >= 0 else { throw LoopbackServerError("socket: \(errno)") }
        var one: Int32 = 1
        setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(sock, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(sock, 64) == 0 else {
            close(sock)
            throw LoopbackServerError("bind/listen: \(errno)")
        }
        var out = sockaddr_in()
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &out) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(sock, $0, &len) } }
        port = UInt16(bigEndian: out.sin_port)
        fd = sock
        let listener = sock
        Thread.detachNewThread { [self] in
            while true {
                let client = accept(listener, nil, nil)
                if client < 0 {
                    if errno == EINTR { continue }
                    return
                }
                Thread.detachNewThread { self.serve(client) }
            }
        }
    }

    deinit { stop() }

    /// `http://127.0.0.1:PORT/`: the report URL a device is given.
    public var baseURL: String { "http://127.0.0.1:\(port)/" }

    /// The next requests' answers, in order; after them `otherwise`.
    public func script(_ answers: [Answer], otherwise: Answer = .ok) {
        state.withLock {
            $0.script = answers
            $0.otherwise = otherwise
        }
    }

    /// Every request so far, in order of arrival.
    public var received: [Received] { state.withLock { $0.received } }

    /// How many requests arrived so far: a test waits on its changes for a delivery.
    public let arrivals = Observed(0)

    /// Stops accepting connections.
    public func stop() {
        let first = state.withLock { s -> Bool in
            defer { s.stopped = true }
            return !s.stopped
        }
        if first {
            shutdown(fd, Int32(SHUT_RDWR))
            close(fd)
        }
    }

    private func serve(_ client: Int32) {
        defer { close(client) }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var headEnd: Int?
        while headEnd == nil {
            let n = recv(client, &chunk, chunk.count, 0)
            guard n > 0 else { return }
            buffer.append(contentsOf: chunk[0..<n])
            headEnd = Self.find([13, 10, 13, 10], in: buffer)
            if buffer.count > 64 * 1024 { return }
        }
        guard let headEnd else { return }
        let lines = String(decoding: buffer[0..<headEnd], as: UTF8.self).components(separatedBy: "\r\n")
        let start = lines.first?.split(separator: " ").map(String.init) ?? []
        guard start.count >= 2 else { return }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let length = headers["content-length"].flatMap(Int.init) ?? 0
        var body = Array(buffer[(headEnd + 4)...])
        while body.count < length {
            let n = recv(client, &chunk, chunk.count, 0)
            guard n > 0 else { return }
            body.append(contentsOf: chunk[0..<n])
        }
        let answer = state.withLock { s -> Answer in
            s.received.append(Received(method: start[0], path: start[1], headers: headers, body: Data(body.prefix(length))))
            return s.script.isEmpty ? s.otherwise : s.script.removeFirst()
        }
        arrivals.update { $0 += 1 }
        answerWith(answer, on: client)
    }

    private func answerWith(_ answer: Answer, on client: Int32) {
        switch answer {
        case .ok:
            answerWith(.status(200, headers: ["Content-Type": "application/json"], body: #"{"accepted":0,"duplicates":0}"#), on: client)
        case .status(let code, let headers, let body):
            var head = "HTTP/1.1 \(code) Stub\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n"
            for (name, value) in headers { head += "\(name): \(value)\r\n" }
            let bytes = Array((head + "\r\n" + body).utf8)
            var sent = 0
            while sent < bytes.count {
                let n = bytes[sent...].withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                guard n > 0 else { return }
                sent += n
            }
        case .after(let seconds, let then):
            WorldTime.passBlocking(.milliseconds(Int(seconds * 1000)), "a collector that is slow to answer, by script")
            answerWith(then, on: client)
        case .hangUp:
            return
        }
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for i in 0...(haystack.count - needle.count) where haystack[i..<(i + needle.count)].elementsEqual(needle) { return i }
        return nil
    }
}

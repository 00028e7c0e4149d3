import Foundation

/// One request of a ``SocketHTTPTransport``: connect, send, read the head, stream the
/// body. Runs on its own thread; ``cancel()`` may be called from any thread.
final class SocketHTTPExchange: @unchecked Sendable {
    // @unchecked Sendable: `fd`, `cancelled` and the stored closures are guarded by `lock`;
    // everything else is touched only by the thread running `runAndResume()`.
    private let lock = NSLock()
    private let request: TransportRequest
    private let bufferSize: Int
    private var fd: Int32 = -1
    private var cancelled = false
    private var head: (@Sendable (TransportResponse) throws -> Void)?
    private var sink: (@Sendable (UnsafeRawBufferPointer) throws -> Void)?
    private var continuation: CheckedContinuation<TransportResponse, any Error>?

    init(request: TransportRequest, bufferSize: Int) {
        self.request = request
        self.bufferSize = bufferSize
    }

    var url: URL { request.url }

    func prepare(head: @escaping @Sendable (TransportResponse) throws -> Void,
                 sink: @escaping @Sendable (UnsafeRawBufferPointer) throws -> Void,
                 continuation: CheckedContinuation<TransportResponse, any Error>) {
        lock.withLock {
            self.head = head
            self.sink = sink
            self.continuation = continuation
        }
    }

    func runAndResume() {
        var result = runOnce()
        closeSocket()
        let c = lock.withLock { () -> CheckedContinuation<TransportResponse, any Error>? in
            defer { continuation = nil }
            return continuation
        }
        if case .failure = result, lock.withLock({ cancelled }) { result = .failure(CancellationError()) }
        c?.resume(with: result)
    }

    /// Takes the closures out of the exchange and runs the transfer; when it returns, no
    /// reference to `head` or `sink` remains (the caller may resume the waiting task).
    private func runOnce() -> Result<TransportResponse, any Error> {
        let taken = lock.withLock { () -> ((@Sendable (TransportResponse) throws -> Void), (@Sendable (UnsafeRawBufferPointer) throws -> Void))? in
            defer {
                head = nil
                sink = nil
            }
            guard let head, let sink else { return nil }
            return (head, sink)
        }
        guard let (head, sink) = taken else {
            return .failure(UpdaterError(.internalError, "GET \(url.absoluteString): transfer started twice"))
        }
        do {
            return .success(try run(head: head, sink: sink))
        } catch {
            return .failure(error)
        }
    }

    func cancel() {
        lock.withLock {
            cancelled = true
            if fd >= 0 { shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    private func closeSocket() {
        lock.withLock {
            if fd >= 0 { close(fd) }
            fd = -1
        }
    }

    // MARK: - The exchange

    private func run(head: (TransportResponse) throws -> Void, sink: (UnsafeRawBufferPointer) throws -> Void) throws -> TransportResponse {
        guard let host = url.host, !host.isEmpty else {
            throw UpdaterError(.invalidArgument, "GET \(url.absoluteString): the URL has no host")
        }
        let port = url.port ?? 80
        let socket = try connect(host: host, port: port)
        let reader = SocketReader(fd: socket, url: url, idleTimeout: request.idleTimeout, bufferSize: bufferSize)
        try reader.send(requestHead(host: host, port: port))
        var response = try reader.readHead()
        while (100...199).contains(response.status) { response = try reader.readHead() }
        try head(response)
        try reader.readBody(of: response, sink: sink)
        return response
    }

    private func requestHead(host: String, port: Int) -> [UInt8] {
        var target = url.path.isEmpty ? "/" : URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? url.path
        if target.isEmpty { target = "/" }
        if let query = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedQuery { target += "?" + query }
        let hostField = host.contains(":") ? "[\(host)]" : host
        var fields: [(String, String)] = [
            ("Host", port == 80 ? hostField : "\(hostField):\(port)"),
            ("User-Agent", "clientctl"), ("Accept-Encoding", "identity"), ("Connection", "close"),
        ]
        for (name, value) in request.headers.sorted(by: { $0.key < $1.key }) {
            fields.removeAll { $0.0.lowercased() == name.lowercased() }
            fields.append((name, value))
        }
        var text = "GET \(target) HTTP/1.1\r\n"
        for (name, value) in fields {
            // Header injection guard: no CR/LF in names or values.
            guard !name.contains(where: \.isNewline), !value.contains(where: \.isNewline) else { continue }
            text += "\(name): \(value)\r\n"
        }
        text += "\r\n"
        return Array(text.utf8)
    }

    /// Resolves `host` and connects to the first address that accepts, within the idle timeout.
    private func connect(host: String, port: Int) throws -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &list)
        guard rc == 0, let first = list else { throw UpdaterError.network(url, .dns) }
        defer { freeaddrinfo(list) }
        var lastFailure = TransportFailure.refused
        var node: UnsafeMutablePointer<addrinfo>? = first
        while let info = node {
            node = info.pointee.ai_next
            let s = socket(info.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            if s < 0 { continue }
            let proceed = lock.withLock { () -> Bool in
                if cancelled { return false }
                fd = s
                return true
            }
            guard proceed else {
                close(s)
                throw CancellationError()
            }
            switch connectWithTimeout(s, info.pointee.ai_addr, info.pointee.ai_addrlen) {
            case nil:
                var one: Int32 = 1
                setsockopt(s, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                return s
            case let failure?:
                lastFailure = failure
                closeSocket()
            }
        }
        throw UpdaterError.network(url, lastFailure)
    }

    private func connectWithTimeout(_ s: Int32, _ addr: UnsafeMutablePointer<sockaddr>?, _ len: socklen_t) -> TransportFailure? {
        let flags = fcntl(s, F_GETFL)
        _ = fcntl(s, F_SETFL, flags | O_NONBLOCK)
        defer { _ = fcntl(s, F_SETFL, flags) }
        if Glibc.connect(s, addr, len) == 0 { return nil }
        guard errno == EINPROGRESS else { return Self.failure(errno) }
        var pfd = pollfd(fd: s, events: Int16(POLLOUT), revents: 0)
        let ready = poll(&pfd, 1, Int32(min(request.idleTimeout * 1000, Double(Int32.max))))
        if ready == 0 { return .timedOut(seconds: request.idleTimeout) }
        var error: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(s, SOL_SOCKET, SO_ERROR, &error, &size)
        return error == 0 ? nil : Self.failure(error)
    }

    static func failure(_ code: Int32) -> TransportFailure {
        switch code {
        case ECONNREFUSED: return .refused
        case ECONNRESET, EPIPE, ECONNABORTED: return .reset
        case ETIMEDOUT: return .timedOut(seconds: 0)
        case ENETUNREACH, EHOSTUNREACH: return .other("network unreachable")
        default: return .other(String(cString: strerror(code)))
        }
    }
}

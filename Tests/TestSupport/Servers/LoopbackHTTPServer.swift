import Foundation
import Synchronization

/// A real HTTP/1.1 server on 127.0.0.1 for tests, written on POSIX sockets.
///
/// - One accept thread plus one thread per connection (blocking I/O, `poll` with a wake
///   pipe so ``stop()`` interrupts every wait). ``stop()`` closes every socket and joins
///   every thread: nothing leaks between tests.
/// - Keep-alive: HTTP/1.1 connections are reused unless the client sends
///   `Connection: close`, ``keepAlive`` is false, or the response carries a fault or a
///   `Content-Length` that differs from the bytes sent (then the server closes after it).
/// - Every request is logged (``log``, ``requests``) before the handler runs.
/// - Call ``stop()`` when done (e.g. in a `defer` or the fixture's `deinit`): the running
///   threads keep the server alive, so its own `deinit` cannot run before that.
/// - Faults: see ``LoopbackResponse/Delivery``, ``LoopbackFaults`` and ``dropConnections(_:)``.
///
/// ```swift
/// let server = try LoopbackHTTPServer(handler: LoopbackHTTPServer.folder(dir))
/// defer { server.stop() }
/// let url = server.url("/app.tgz")
/// ```
public final class LoopbackHTTPServer: Sendable {
    // Socket descriptors are owned by exactly one thread each.
    public typealias Handler = @Sendable (LoopbackRequest) -> LoopbackResponse

    private let handler: Handler
    private struct State {
        var listenFD: Int32 = -1
        /// Bound but not listening while stopped: the port stays this server's (connections
        /// are refused) so a restart cannot lose it to another test's socket.
        var placeholderFD: Int32 = -1
        var wakeRead: Int32 = -1
        var wakeWrite: Int32 = -1
        var running = false
        var group = DispatchGroup()
        var openConnections: Set<Int32> = []
        var exchanges: [LoopbackExchange] = []
        var connectionCount = 0
        var dropNext = 0
        var keepAlive = true
        var port: UInt16
    }
    private let state: Mutex<State>
    /// Bumped after each change of the log, so ``settledLog()`` waits on changes.
    private let logChanges = Observed(0)

    /// The TCP port (kept across ``stop()``/``start()``).
    public var port: UInt16 { state.withLock { $0.port } }

    /// Starts a server on 127.0.0.1. `port` 0 picks an ephemeral port.
    public init(port: UInt16 = 0, handler: @escaping Handler) throws {
        state = Mutex(State(port: port))
        self.handler = handler
        try start()
    }

    deinit {
        stop()
        let placeholder = state.withLock { $0.placeholderFD }
        if placeholder >= 0 { close(placeholder) }
    }

    /// `http://127.0.0.1:<port>`.
    public var baseURL: URL {
        URL(string: "http://127.0.0.1:\(port)")!  // swiftlint:disable:this force_unwrapping - a literal host/port always parses
    }

    /// The URL of `path` (which starts with `/`, may carry a query) on this server.
    public func url(_ path: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)\(path)") ?? baseURL.appendingPathComponent(path)
    }

    /// Whether idle HTTP/1.1 connections are kept open for another request (default true).
    public var keepAlive: Bool {
        get { state.withLock { $0.keepAlive } }
        set { state.withLock { $0.keepAlive = newValue } }
    }

    /// Every request received so far, in arrival order, with what was sent back.
    public var log: [LoopbackExchange] { state.withLock { $0.exchanges } }
    /// The log once every exchange in it has finished: the server thread records its byte
    /// count after its last write, which the client may see first.
    /// - Throws: ``HarnessError`` when an exchange is still unfinished after 30 s.
    public func settledLog() async throws -> [LoopbackExchange] {
        try await logChanges.wait(for: "every exchange of the loopback server to finish") { [self] _ in log.allSatisfy(\.finished) }
        return log
    }
    /// Every request received so far, in arrival order.
    public var requests: [LoopbackRequest] { log.map(\.request) }
    /// The number of TCP connections accepted so far (dropped ones included).
    public var connectionsAccepted: Int { state.withLock { $0.connectionCount } }

    /// Forgets the log (and the connection count).
    public func clearLog() { state.withLock { $0.exchanges.removeAll() } }

    /// The next `count` accepted connections are reset at once, before reading anything:
    /// the client sees a connection reset ("refuse, then recover").
    public func dropConnections(_ count: Int) { state.withLock { $0.dropNext = count } }

    /// Binds (again) to ``port`` and starts accepting. Used after ``stop()`` to simulate a
    /// server coming back.
    public func start() throws {
        let (placeholder, port) = state.withLock { state in
            defer { state.placeholderFD = -1 }
            return (state.placeholderFD, state.port)
        }
        if placeholder >= 0 { close(placeholder) }
        let fd = try Self.bindLoopback(port: port)
        var pipeFDs: [Int32] = [0, 0]
        guard pipe(&pipeFDs) == 0 else {
            close(fd)
            throw LoopbackServerError("pipe: \(String(cString: strerror(errno)))")
        }
        for p in pipeFDs { _ = fcntl(p, F_SETFD, FD_CLOEXEC) }
        let bound = try Self.localPort(fd)
        let g = DispatchGroup()
        state.withLock { state in
            state.listenFD = fd
            state.wakeRead = pipeFDs[0]
            state.wakeWrite = pipeFDs[1]
            state.port = bound
            state.running = true
            state.group = g
        }
        let wakeFD = pipeFDs[0]
        g.enter()
        let thread = Thread { [self] in
            acceptLoop(listen: fd, wake: wakeFD)
            g.leave()
        }
        thread.name = "loopback-accept-\(bound)"
        thread.start()
    }

    /// Stops accepting, closes every open connection and waits for all threads to end.
    /// Idempotent. Connections to the port are refused afterwards; the port stays
    /// reserved for ``start()`` until the server is released.
    public func stop() {
        let (wasRunning, g, wake, listen) = state.withLock { state in
            let was = state.running
            state.running = false
            return (was, state.group, state.wakeWrite, state.listenFD)
        }
        guard wasRunning else { return }
        var byte: UInt8 = 1
        _ = write(wake, &byte, 1)
        state.withLock { state in
            for fd in state.openConnections { shutdown(fd, Int32(SHUT_RDWR)) }
        }
        g.wait()
        state.withLock { state in
            close(listen)
            close(state.wakeRead)
            close(state.wakeWrite)
            state.listenFD = -1
            state.wakeRead = -1
            state.wakeWrite = -1
            state.placeholderFD = (try? Self.bindLoopback(port: state.port, listen: false)) ?? -1
        }
    }

    /// A loopback port held bound but not listening for as long as the value lives:
    /// connecting to it is refused, and no other test's server can take it meanwhile
    /// (a port from ``unusedPort()`` may be reused by the next server bound in parallel).
    public final class RefusingPort: Sendable {
        /// Closed in deinit.
        private let fd: Int32
        public let port: UInt16
        init() throws {
            fd = try LoopbackHTTPServer.bindLoopback(port: 0, listen: false)
            port = try LoopbackHTTPServer.localPort(fd)
        }
        deinit { close(fd) }
    }

    /// A port that refuses connections while the returned value lives.
    public static func refusingPort() throws -> RefusingPort { try RefusingPort() }

    /// A loopback port on which nothing listens now (for a daemon the test starts on it;
    /// to be refused, use ``refusingPort()``, which keeps the port reserved).
    public static func unusedPort() throws -> UInt16 {
        let fd = try bindLoopback(port: 0, listen: false)
        defer { close(fd) }
        return try localPort(fd)
    }

    // MARK: - Accept loop

    private func acceptLoop(listen fd: Int32, wake: Int32) {
        while true {
            var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
            let n = poll(&fds, 2, -1)
            if n < 0 && errno == EINTR { continue }
            if n < 0 || fds[1].revents != 0 { return }
            let client = accept(fd, nil, nil)
            if client < 0 { continue }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            var one: Int32 = 1
            setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            let (accepted, number, drop, g) = state.withLock { state in
                guard state.running else { return (false, 0, false, state.group) }
                state.connectionCount += 1
                let drop = state.dropNext > 0
                if drop { state.dropNext -= 1 }
                state.openConnections.insert(client)
                return (true, state.connectionCount, drop, state.group)
            }
            guard accepted else {
                close(client)
                return
            }
            if drop {
                closeConnection(client, reset: true)
                continue
            }
            g.enter()
            let thread = Thread { [self] in
                LoopbackConnection(server: self, fd: client, number: number, wake: wake).run()
                g.leave()
            }
            thread.name = "loopback-conn-\(number)"
            thread.start()
        }
    }

    // MARK: - Used by LoopbackConnection

    func record(_ head: LoopbackRequestParser.Head, connection: Int) -> (LoopbackRequest, Int) {
        defer { logChanges.update { $0 += 1 } }
        return state.withLock { state in
            let (rawPath, query) = Self.split(head.target)
            let request = LoopbackRequest(
                index: state.exchanges.count + 1, connection: connection, method: head.method, target: head.target,
                path: rawPath.removingPercentEncoding ?? rawPath, query: query, headers: head.headers,
                version: head.version)
            state.exchanges.append(LoopbackExchange(request: request, status: nil, bodyBytesSent: 0, finished: false))
            return (request, state.exchanges.count - 1)
        }
    }

    func update(_ slot: Int, status: Int?, sent: Int64, finished: Bool) {
        defer { logChanges.update { $0 += 1 } }
        state.withLock { state in
            guard slot < state.exchanges.count else { return }
            state.exchanges[slot].status = status
            state.exchanges[slot].bodyBytesSent = sent
            state.exchanges[slot].finished = finished
        }
    }

    func respond(to request: LoopbackRequest) -> LoopbackResponse { handler(request) }

    var isKeepAlive: Bool { keepAlive }

    func closeConnection(_ fd: Int32, reset: Bool) {
        if reset {
            var l = linger(l_onoff: 1, l_linger: 0)
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, socklen_t(MemoryLayout<linger>.size))
        }
        state.withLock { state in
            state.openConnections.remove(fd)
            close(fd)
        }
    }

    // MARK: - Sockets

    private static func split(_ target: String) -> (String, String?) {
        guard let q = target.firstIndex(of: "?") else { return (target, nil) }
        return (String(target[..<q]), String(target[target.index(after: q)...]))
    }

    private static func bindLoopback(port: UInt16, listen doListen: Bool = true) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw LoopbackServerError("socket: \(String(cString: strerror(errno)))") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        addr.sin_addr = in_addr(s_addr: UInt32(0x7f00_0001).bigEndian)
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard rc == 0 else {
            let e = errno
            close(fd)
            throw LoopbackServerError("bind 127.0.0.1:\(port): \(String(cString: strerror(e)))")
        }
        if doListen {
            guard listen(fd, 128) == 0 else {
                let e = errno
                close(fd)
                throw LoopbackServerError("listen: \(String(cString: strerror(e)))")
            }
        }
        return fd
    }

    private static func localPort(_ fd: Int32) throws -> UInt16 {
        var addr = sockaddr_in()
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let rc = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        guard rc == 0 else { throw LoopbackServerError("getsockname: \(String(cString: strerror(errno)))") }
        return UInt16(bigEndian: addr.sin_port)
    }
}

/// A failure to set up the loopback server.
public struct LoopbackServerError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

import Foundation
import ServingCore
import TestSupport
import Testing

/// Issue 10 point 4 with a real `clientctl serve`: silent, trickling and idle keep-alive
/// connections are closed, and a flood of idle connections past the descriptor limit
/// neither keeps new requests out for long nor makes the accept loop spin.
@Suite(.serialized) struct ServeConnectionLimitTests {
    /// A raw TCP connection to 127.0.0.1 with a receive timeout.
    /// With `connectTimeout`, `connect` gives up after that many seconds (a full backlog).
    static func connect(_ port: Int, receiveTimeout: Int = 20, connectTimeout: Int? = nil) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var timeout = timeval(tv_sec: receiveTimeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        if let connectTimeout {
            var limit = timeval(tv_sec: connectTimeout, tv_usec: 0)  // SO_SNDTIMEO bounds connect(2)
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let ok = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard ok == 0 else {
            close(fd)
            return nil
        }
        return fd
    }

    /// Sends without SIGPIPE: the server may already have closed the connection.
    static func send(_ fd: Int32, _ text: String) {
        _ = Array(text.utf8).withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Reads until the peer closes (true) or the receive timeout passes (false).
    static func closedByPeer(_ fd: Int32) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(fd, &buffer, buffer.count)
            if n == 0 { return true }
            if n < 0 { return false }
        }
    }

    /// How many sockets a process has open (its connections and its listener), from the
    /// links in /proc/PID/fd.
    static func openSockets(_ pid: Int32) -> Int {
        let folder = "/proc/\(pid)/fd"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.filter { (try? FileManager.default.destinationOfSymbolicLink(atPath: folder + "/" + $0))?.hasPrefix("socket:") == true }
            .count
    }

    /// CPU seconds (user + system) a process has used, from /proc/PID/stat.
    static func cpuSeconds(_ pid: Int32) -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    @Test func silentTricklingAndIdleConnectionsAreClosed() async throws {
        let (rig, serve) = try await ServeHardeningTests.servedRoot("timeouts", serveArguments: ["--header-timeout", "1", "--idle-timeout", "1"])
        defer { withExtendedLifetime(rig) {} }
        let port = serve.port
        let silent = try #require(Self.connect(port, receiveTimeout: 10))
        defer { close(silent) }
        let http10 = try #require(Self.connect(port, receiveTimeout: 10))
        defer { close(http10) }
        Self.send(http10, "GET / HTTP/1.0\r\n")
        let trickle = try #require(Self.connect(port, receiveTimeout: 10))
        defer { close(trickle) }
        Self.send(trickle, "GET / HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n")
        for i in 0..<6 {  // a header line every 0.5 s: never a complete head
            try await WorldTime.pass(.milliseconds(500), "a slow peer's pace")
            Self.send(trickle, "X-Slow-\(i): 1\r\n")
        }
        #expect(try await offload { Self.closedByPeer(silent) }, "a connection that sends nothing is closed")
        #expect(try await offload { Self.closedByPeer(http10) }, "an HTTP/1.0 head that never ends is closed")
        #expect(try await offload { Self.closedByPeer(trickle) }, "a head trickled byte by byte is cut at the header timeout")

        let keepAlive = try #require(Self.connect(port, receiveTimeout: 10))
        defer { close(keepAlive) }
        Self.send(keepAlive, "GET /style.css HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
        #expect(try await offload { Self.closedByPeer(keepAlive) }, "after its response, an idle keep-alive connection is closed")
        #expect(serve.process.isRunning)
    }

    /// A descriptor limit for serve that a flood from this process can pass: at most 512,
    /// and at most half of what this process may open beside the tests running with it
    /// (its soft limit is raised to make room). A hard limit too low to flood serve fails.
    ///
    /// At most 512, so that the flood (about 1.07 times the limit) and every other test's
    /// descriptors stay far below 1,300 in this process: swift-corelibs-foundation's
    /// `Process.run()` finds the highest open descriptor by reading `/proc/self/fd`
    /// (`findMaximumOpenFromProcSelfFD` in its Process.swift) and copies each entry's
    /// whole 256-byte `d_name`; once the listing fills readdir's 32 KiB buffer (about 1,365
    /// entries of 24 bytes), the copy of the last name reads past the buffer. A CI run
    /// died of it (SIGSEGV in memmove, the registers holding `/proc/self/fd` entries 1360
    /// and 1361) while a flood of 1,100 connections was held and another test started a
    /// child with `Process`.
    static func floodableServeLimit() throws -> Int {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        let room = Int(min(limit.rlim_max, 8_192))
        let serveLimit = min(512, room / 2 - 64)
        try #require(serveLimit >= 128, "RLIMIT_NOFILE's hard limit \(limit.rlim_max) leaves too few descriptors to flood serve")
        if limit.rlim_cur < room {
            limit.rlim_cur = rlim_t(room)
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        return serveLimit
    }

    /// Opens more idle connections to `port` than serve may have descriptors
    /// (`serveLimit`), keeping those the kernel accepts; with `stopPast`, it stops at the
    /// first connection refused by a full backlog once it holds more than that many.
    static func flood(_ port: Int, past serveLimit: Int, stopPast: Int? = nil) async throws -> [Int32] {
        // Connecting blocks while the backlog is full: on a thread of its own, not the pool.
        try await offload { () -> [Int32] in
            var held: [Int32] = []
            for _ in 0..<(serveLimit + serveLimit / 16 + 12) {
                guard let fd = Self.connect(port, receiveTimeout: 1, connectTimeout: 2) else {
                    if let stopPast, held.count > stopPast { break }
                    continue
                }
                held.append(fd)
            }
            return held
        }
    }

    @Test func aFloodOfIdleConnectionsPastTheDescriptorLimit() async throws {
        let serveLimit = try Self.floodableServeLimit()
        let (rig, serve) = try await ServeHardeningTests.servedRoot(
            "flood", serveArguments: ["--header-timeout", "2"], ulimit: serveLimit)
        defer { withExtendedLifetime(rig) {} }
        let held = try await Self.flood(serve.port, past: serveLimit)
        defer { for fd in held { close(fd) } }
        #expect(held.count >= serveLimit * 7 / 8, "the kernel accepted most connections (\(held.count))")
        let before = try #require(Self.cpuSeconds(serve.pid))
        try await WorldTime.pass(.seconds(3), "the window in which serve's CPU time is measured")
        let spent = try #require(Self.cpuSeconds(serve.pid)) - before
        #expect(spent < 1.5, "serve idles while over its descriptor limit (\(spent) s of CPU in 3 s)")
        // A new request gets through once the header timeout frees slots.
        let answer = try await Curl.request(serve.baseURL + "style.css")
        #expect(answer.status == 200)
        #expect(serve.process.isRunning, "\(serve.stderr)")
    }

    /// serve accepts at most half its descriptor limit at once (at most 512:
    /// `ServerConfiguration.defaultMaxConnections`; 256 under the limit of 512 here) and
    /// leaves the rest of a flood in the kernel's backlog: it reaches that cap, holds no more than the accepts of the one read
    /// already under way, and idles there. The header timeout is long, so that no slot is
    /// freed while a slow machine is still flooding.
    @Test func aFloodFillsServesConnectionCapAndNoMore() async throws {
        let serveLimit = try Self.floodableServeLimit()
        let cap = min(serveLimit / 2, 512)
        let (rig, serve) = try await ServeHardeningTests.servedRoot(
            "flood-cap", serveArguments: ["--header-timeout", "120"], ulimit: serveLimit)
        defer { withExtendedLifetime(rig) {} }
        let idle = Self.openSockets(serve.pid)  // its listener and its own
        var held = try await Self.flood(serve.port, past: serveLimit, stopPast: cap + 32)
        defer { for fd in held { close(fd) } }
        #expect(held.count > cap + 32, "the flood passes the cap (\(held.count) connections)")
        try await Poll.until("serve to accept \(cap) connections", timeout: 60) { Self.openSockets(serve.pid) - idle >= cap }
        let before = try #require(Self.cpuSeconds(serve.pid))
        var peak = 0
        for _ in 0..<30 {
            peak = max(peak, Self.openSockets(serve.pid) - idle)
            try await WorldTime.pass(.milliseconds(100), "the pace of the samples of serve's open sockets")
        }
        let spent = try #require(Self.cpuSeconds(serve.pid)) - before
        // The cap, or up to three more: the gate (Hummingbird's AvailableConnectionsChannelHandler)
        // withholds the listener's next read, but the read already under way runs NIO's
        // accept loop to the end, up to `maxMessagesPerRead` (4 by default, NIOPosix
        // BaseSocketChannel.swift; ServerSocketChannel.readFromSocket) connections at once.
        #expect((cap...cap + 3).contains(peak), "serve held \(peak) connections; its cap is \(cap)")
        #expect(spent < 1.5, "serve idles at its cap (\(spent) s of CPU in 3 s)")
        // Once the flood goes, a request gets through.
        for fd in held { close(fd) }
        held = []
        let answer = try await Curl.request(serve.baseURL + "style.css")
        #expect(answer.status == 200)
        #expect(serve.process.isRunning, "\(serve.stderr)")
    }
}

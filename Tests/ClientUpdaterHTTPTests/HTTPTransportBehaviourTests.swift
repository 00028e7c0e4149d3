import ClientFoundation
import ClientUpdater
import Foundation
import Synchronization
import TestSupport
import Testing

@testable import ClientUpdaterHTTP

extension HTTPSuites {
    /// What AsyncHTTPClient brings and our rules on top: back-pressure, redirects, timeouts,
    /// connection reuse, no leaked threads. Every test talks to a real server on 127.0.0.1.
    @Suite struct HTTPTransportBehaviourTests {
        /// A slow sink stops the transfer: the bytes the server managed to send beyond what
        /// the sink took are bounded by socket buffers, not by the body size.
        @Test func slowSinkHoldsTheServerBack() async throws {
            // What the connection can hold in flight is the kernel's (KernelSocketBuffers:
            // 36 MiB where a fixed 24 MiB bound once failed at 35 MiB, though it is usually
            // 4 to 6 MiB), plus AsyncHTTPClient's small read-ahead. The body is four times
            // that bound, so a transport that kept the body in memory fails at either pause.
            let bound = try KernelSocketBuffers.inFlightBound()
            let scratch = try HTTPScratch()
            let size: Int64 = max(128 << 20, 4 * bound)
            try sparseFile(scratch.folder("big.bin"), size: size)
            let server = try LoopbackHTTPServer { _ in
                var r = LoopbackResponse(status: 200, body: .file(path: scratch.folder("big.bin"), offset: 0, length: size))
                r.delivery.dripBytes = 256 * 1024  // the server reports its progress after every chunk
                r.delivery.dripInterval = 0
                return r
            }
            defer { server.stop() }
            let probe = BackPressureProbe(server: server, secondPauseAt: size / 2)
            try await withTransport { transport in
                let response = try await transport.get(TransportRequest(url: server.url("/big.bin"), idleTimeout: .seconds(30))) { chunk in
                    probe.received(chunk.count)
                }
                #expect(response.status == 200)
            }
            #expect(probe.delivered == size)
            let ahead = try #require(probe.maxAhead)
            #expect(ahead < bound, "server got \(ahead >> 20) MiB ahead of a sink that was not reading (bound \(bound >> 20) MiB)")
            #expect(ahead > 0)
        }

        @Test func redirectsAreFollowedWithinTheLimit() async throws {
            let server = try LoopbackHTTPServer { request in
                switch request.path {
                case "/old": return LoopbackResponse(status: 301, headers: [("Location", "/mid?x=1")])
                case "/mid":
                    return LoopbackResponse(
                        status: 307, headers: [("Location", "http://localhost:\(request[header: "host"]?.split(separator: ":").last ?? "")/new")])
                case "/new": return .text("arrived")
                default: return LoopbackResponse(status: 302, headers: [("Location", request.path)])  // a loop
                }
            }
            defer { server.stop() }
            try await withTransport { transport in
                let (response, body) = try await transport.fetchAll(server.url("/old"), headers: ["If-None-Match": "\"e\""])
                #expect(response.status == 200 && body == Data("arrived".utf8))
                #expect(server.requests.map(\.path) == ["/old", "/mid", "/new"])
                #expect(server.requests.allSatisfy { $0[header: "if-none-match"] == "\"e\"" }, "headers go to every hop, like curl")
                server.clearLog()
                let error = await #expect(throws: HTTPTransportError.self) { try await transport.fetchAll(server.url("/loop")) }
                #expect(error?.transportFailure == .redirect("more than 10 redirects"), "\(error?.message ?? "")")
                #expect(error?.isTransient == false)
                #expect(server.requests.count == 11)
            }
        }

        @Test func redirectRule() throws {
            let https = try #require(URL(string: "https://cdn.example.com/a/manifest.json"))
            let http = try #require(URL(string: "http://127.0.0.1:8080/a/manifest.json"))
            #expect(
                try RedirectRule.next(from: https, status: 302, location: "../b/m.json", hop: 1, maxRedirects: 3)?.absoluteString
                    == "https://cdn.example.com/b/m.json")
            #expect(try RedirectRule.next(from: http, status: 308, location: "https://x.example/m", hop: 3, maxRedirects: 3) != nil)
            #expect(try RedirectRule.next(from: http, status: 304, location: "/x", hop: 1, maxRedirects: 3) == nil)
            #expect(try RedirectRule.next(from: http, status: 302, location: nil, hop: 1, maxRedirects: 3) == nil)
            for (from, location, hop) in [(https, "http://cdn.example.com/m", 1), (http, "ftp://x/y", 1), (http, "/x", 4)] {
                #expect(throws: HTTPTransportError.self) {
                    try RedirectRule.next(from: from, status: 302, location: location, hop: hop, maxRedirects: 3)
                }
            }
        }

        /// A listener whose accept queue is full: the kernel drops further SYNs, so the
        /// connection never completes and only the connect timeout ends the wait.
        @Test func connectTimeout() async throws {
            let blackhole = try FullBacklogListener()
            defer { blackhole.close() }
            var settings = HTTPTransportSettings()
            settings.connectTimeout = .milliseconds(300)
            let url = try #require(URL(string: "http://127.0.0.1:\(blackhole.port)/x"))
            try await withTransport(settings) { transport in
                let error = await #expect(throws: HTTPTransportError.self) { try await transport.fetchAll(url, idleTimeout: .seconds(30)) }
                #expect(error?.transportFailure == .connectTimedOut(.milliseconds(300)), "\(error?.message ?? "")")
                #expect(error?.isTransient == true)
            }
        }

        /// Bytes keep coming (never idle for the stall timeout) but the whole download takes
        /// longer than its time limit.
        @Test func overallTimeLimit() async throws {
            let faults = LoopbackFaults()
            faults.add(.drip(bytes: 1000, every: 0.05))
            let server = try LoopbackHTTPServer(handler: faults.wrap { _ in LoopbackResponse(status: 200, body: .data(httpTestBytes(20_000))) })
            defer { server.stop() }
            try await withTransport { transport in
                let error = await #expect(throws: HTTPTransportError.self) {
                    try await transport.fetchAll(server.url("/slow"), idleTimeout: .seconds(5), timeLimit: .milliseconds(400))
                }
                #expect(error?.transportFailure == .deadlineExceeded(.milliseconds(400)), "\(error?.message ?? "")")
            }
        }

        /// The stall rule on the manual clock: only time spent waiting for the server counts.
        @Test func stallWatchCountsOnlyWaitingTime() async {
            let clock = ManualClock()
            let watch = StallWatch(idleTimeout: .seconds(2), clock: MonotonicClock(clock))
            var now: Duration { clock.now.offset }
            func tick(_ by: Duration) async -> Bool {
                await clock.advance(by: by)
                return watch.tick(now: now)
            }
            #expect(await !tick(.milliseconds(900)))
            #expect(await !tick(.milliseconds(900)))
            watch.arrived()  // a chunk: the sink runs for a long time
            #expect(await !tick(.milliseconds(500)))
            #expect(await !tick(.milliseconds(59_500)))
            watch.waiting()
            #expect(await !tick(.milliseconds(750)))
            watch.waiting()  // still the same wait
            #expect(await !tick(.milliseconds(750)))
            #expect(await tick(.milliseconds(500)), "2 s of waiting is a stall")
            let limited = StallWatch(idleTimeout: .seconds(30), timeLimit: .seconds(5), clock: MonotonicClock(clock))
            await clock.advance(by: .milliseconds(4_900))
            #expect(!limited.isOverTime())
            limited.arrived()
            await clock.advance(by: .milliseconds(100))
            #expect(limited.isOverTime(), "the time limit counts the sink's time too")
        }

        /// A process starved of CPU wakes its watch late: one late tick counts at most one
        /// second of waiting, so only a wait that goes on over several ticks is a stall.
        @Test func aStarvedProcessIsNotAStall() async {
            let clock = ManualClock()
            let watch = StallWatch(idleTimeout: .seconds(2), clock: MonotonicClock(clock))
            var now: Duration { clock.now.offset }
            await clock.advance(by: .seconds(60))  // neither the transfer nor the watch ran for a minute
            #expect(!watch.tick(now: now), "one late tick is no stall")
            watch.arrived()  // the starved transfer gets its bytes
            watch.waiting()
            await clock.advance(by: .seconds(60))
            #expect(!watch.tick(now: now))
            await clock.advance(by: .milliseconds(250))
            #expect(!watch.tick(now: now))
            await clock.advance(by: .milliseconds(250))
            #expect(!watch.tick(now: now))
            await clock.advance(by: .milliseconds(500))
            #expect(watch.tick(now: now), "still nothing after ticks worth 2 s: a stall")
        }

        /// The watch's own loop on the manual clock, no real time passing: it sleeps a step
        /// (an eighth of the idle timeout), and a transfer that waits the idle timeout ends
        /// with the stall's failure, one that runs past its time limit with the deadline's.
        @Test func theWatchEndsAStalledTransferOnItsClock() async throws {
            let url = try #require(URL(string: "http://127.0.0.1:1/x"))
            let clock = ManualClock()
            let watch = StallWatch(idleTimeout: .seconds(2), clock: MonotonicClock(clock))
            #expect(watch.step == .milliseconds(250))
            let stalled = Task { try await watch.watch(url: url) }
            for _ in 0..<7 {
                try await clock.waitForSleeper()
                await clock.advance(by: watch.step)
            }
            try await clock.waitForSleeper()  // 1.75 s waited: still watching
            await clock.advance(by: watch.step)
            let error = await #expect(throws: HTTPTransportError.self) { try await stalled.value }
            #expect(error?.transportFailure == .timedOut(.seconds(2)))

            let limited = StallWatch(idleTimeout: .seconds(30), timeLimit: .seconds(1), clock: MonotonicClock(clock))
            #expect(limited.step == .milliseconds(125))
            let overTime = Task { try await limited.watch(url: url) }
            for _ in 0..<8 {
                try await clock.waitForSleeper()
                limited.arrived()  // bytes keep coming: never a stall
                await clock.advance(by: limited.step)
            }
            let late = await #expect(throws: HTTPTransportError.self) { try await overTime.value }
            #expect(late?.transportFailure == .deadlineExceeded(.seconds(1)))
            #expect(late?.message.contains("took longer than the time limit of 1 s") == true, "\(late?.message ?? "")")
        }

        /// The many small requests of a Meteor update share a few kept-alive connections.
        @Test func connectionsAreReused() async throws {
            let server = try LoopbackHTTPServer { request in .text(request.path) }
            defer { server.stop() }
            try await withTransport(HTTPTransportSettings(maxConnectionsPerHost: 4)) { transport in
                for i in 0..<20 {
                    let (_, body) = try await transport.fetchAll(server.url("/s\(i)"))
                    #expect(body == Data("/s\(i)".utf8))
                }
                #expect(server.connectionsAccepted == 1, "sequential requests use one connection")
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for i in 0..<60 {
                        group.addTask {
                            let (_, body) = try await transport.fetchAll(server.url("/p\(i)"))
                            #expect(body == Data("/p\(i)".utf8))
                        }
                    }
                    try await group.waitForAll()
                }
            }
            #expect(server.requests.count == 80)
            #expect(server.connectionsAccepted <= 4, "at most maxConnectionsPerHost connections, not one per request")
        }

        /// Shutting a registry down closes its pool; AsyncHTTPClient runs on NIO's singleton
        /// event loop group, so transports come and go without starting threads.
        @Test func registriesStartNoThreadsAndShutDownCleanly() async throws {
            let server = try LoopbackHTTPServer { _ in .text("ok") }
            defer { server.stop() }
            try await withTransport { transport in _ = try await transport.fetchAll(server.url("/warm")) }
            let before = nioThreads()
            for _ in 0..<5 {
                try await withTransport { transport in
                    for _ in 0..<3 { _ = try await transport.fetchAll(server.url("/x")) }
                }
            }
            #expect(nioThreads() <= before, "threads before: \(before)")
            let registry = HTTPClientRegistry()
            let transport = HTTPTransport(registry: registry)
            _ = try await transport.fetchAll(server.url("/y"))
            #expect(registry.clientCount == 1)
            try await registry.shutdown()
            #expect(registry.clientCount == 0)
            let error = await #expect(throws: HTTPTransportError.self) { try await transport.fetchAll(server.url("/z")) }
            #expect(error?.code == .shutDown)
        }
    }
}

/// Threads of this process whose name says NIO started them.
func nioThreads() -> Int {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return tasks.filter { id in
        let comm = (try? String(contentsOfFile: "/proc/self/task/\(id)/comm", encoding: .utf8)) ?? ""
        return comm.hasPrefix("NIO")
    }.count
}

/// Watches how far the server gets ahead of a sink that stops reading.
///
/// On the first chunk the sink blocks until the server's sent-byte count has not moved
/// for several polls (the pipe is full), records how far ahead it got, then reads on.
final class BackPressureProbe: @unchecked Sendable {
    // @unchecked Sendable: the transport calls `received` serially; fields are only
    // touched from there and read after the transfer.
    let server: LoopbackHTTPServer
    let secondPauseAt: Int64
    private(set) var delivered: Int64 = 0
    private(set) var maxAhead: Int64?
    private var pauses = 0

    /// Pauses at the first chunk, and again once `secondPauseAt` bytes have arrived (by
    /// then the kernel has grown the connection's buffers).
    init(server: LoopbackHTTPServer, secondPauseAt: Int64) {
        self.server = server
        self.secondPauseAt = secondPauseAt
    }

    func received(_ count: Int) {
        delivered += Int64(count)
        guard pauses < 2, delivered > Int64(pauses) * secondPauseAt else { return }
        pauses += 1
        // The server's sent count settles once the socket buffers are full (the kernel tells
        // no one: unchanged at five looks in a row).
        var last: Int64 = -1
        var still = 0
        try? Poll.untilBlocking("the server's sent count to settle", timeout: 2, every: .milliseconds(20)) {
            let sent = server.log.first?.bodyBytesSent ?? 0
            still = sent == last ? still + 1 : 0
            last = sent
            return still >= 5
        }
        maxAhead = max(maxAhead ?? 0, last - delivered)
    }
}

/// A TCP listener on 127.0.0.1 that never accepts, with its accept queue filled.
final class FullBacklogListener: @unchecked Sendable {
    // @unchecked Sendable: descriptors are set once in init and closed once.
    let port: UInt16
    private var fds: [Int32] = []

    init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr = in_addr(s_addr: UInt32(0x7f00_0001).bigEndian)
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 0) == 0 else { throw UpdaterError(.io, "bind/listen on 127.0.0.1 failed") }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        var local = sockaddr_in()
        _ = withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &len) }
        }
        port = UInt16(bigEndian: local.sin_port)
        fds.append(listener)
        addr.sin_port = local.sin_port
        // Fill the queue: with backlog 0 Linux queues one connection; a few more make sure.
        for _ in 0..<4 {
            let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            _ = withUnsafePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            fds.append(client)
        }
        // The queue is full once the first connection has completed (it sits there, never
        // accepted): wait for that event, bounded, instead of a fixed pause.
        var first = pollfd(fd: fds[1], events: Int16(POLLOUT), revents: 0)
        guard poll(&first, 1, 10_000) == 1, first.revents & Int16(POLLOUT) != 0 else {
            close()
            throw UpdaterError(.io, "the first connection to the backlog-0 listener did not complete within 10 s")
        }
    }

    func close() {
        for fd in fds { Glibc.close(fd) }
        fds.removeAll()
    }
}

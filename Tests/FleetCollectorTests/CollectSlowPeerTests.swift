import FleetCollector
import FleetReports
import Foundation
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// One source address cannot starve every device (docs/fleet-reports.md#the-collector): a
/// real `clientctl collect` on 127.0.0.1 while 127.0.0.1 trickles request bodies a byte at
/// a time and holds 1,100 idle sockets (each renewed as soon as the collector closes it),
/// and devices post from 127.0.0.2 with their own 20 s limit: every batch is stored.
@Suite(.serialized) struct CollectSlowPeerTests {
    typealias F = CollectorFixtures

    @Test func slowBodiesAndIdleSocketsFromOneAddressStarveNoDevice() async throws {
        let dir = try TemporaryDirectory("collect-slow")
        let collector = try await CollectProcess(database: "sqlite:" + dir("reports.db"), scratch: dir.path)
        let peers = SlowPeers(port: collector.port, trickling: 40, idle: 1100)
        peers.start()
        defer { peers.stop() }
        // The attack takes hold before the devices come: every socket open, bodies trickled twice.
        try await peers.trickles.wait(for: "the slow peers to trickle twice", timeout: .seconds(120)) { $0 >= 2 }
        // 40 batches from 4 devices at a time over about 20 s, each with a device's 20 s limit.
        let statuses = try await withThrowingTaskGroup(of: [String].self) { group in
            for worker in 0..<4 {
                group.addTask {
                    var out: [String] = []
                    for b in 0..<10 {
                        let batch = F.heartbeats(device: 7000 + worker * 10 + b, count: 3)
                        out.append(try await Self.postAsDevice(batch.encoded(), port: collector.port))
                        try await WorldTime.pass(.seconds(2), "a device's pace between its batches")
                    }
                    return out
                }
            }
            return try await group.reduce(into: [String]()) { $0 += $1 }
        }
        let attack = peers.stop()
        #expect(statuses.count == 40)
        #expect(statuses.allSatisfy { $0 == "200" }, "\(statuses)")
        #expect(try await F.storedReports(dir("reports.db")) == 120)
        // The attack was real: connections were opened, and the collector cut them.
        #expect(attack.opened > 1100, "\(attack)")
        #expect(attack.cut > 0, "\(attack)")
        #expect(attack.trickledCut > 0, "trickled bodies are cut: \(attack)")
        // 127.0.0.1 gets its places back once its sockets are gone.
        var metrics: CurlResponse?
        try? await Poll.until("the collector to answer for its metrics", timeout: 10, every: .milliseconds(500)) {
            metrics = try? await collector.read("metrics", token: collector.token)
            return metrics != nil
        }
        let line = metrics?.body.split(separator: "\n").first { $0.hasPrefix("fleet_collector_connections_refused_total") }
        let refused: Double = line.flatMap { $0.split(separator: " ").last }.flatMap { Double($0) } ?? 0
        #expect(refused > 0, "\(String(line ?? "none"))")
        #expect(collector.stop() == 0)
    }

    @Test func anAddressHoldsAtMostItsPlacesAndGetsThemBack() {
        let slots = AddressSlots(limit: 2)
        #expect(slots.enter("127.0.0.1") && slots.enter("127.0.0.1"))
        #expect(!slots.enter("127.0.0.1"), "a third place of the same address")
        #expect(slots.enter("127.0.0.2"), "another address is not held back")
        slots.leave("127.0.0.1")
        #expect(slots.holding("127.0.0.1") == 1)
        #expect(slots.enter("127.0.0.1"))
        for _ in 0..<2 { slots.leave("127.0.0.1") }
        slots.leave("127.0.0.2")
        #expect(slots.holding("127.0.0.1") == 0 && slots.holding("127.0.0.2") == 0)
    }

    /// `POST /v1/reports` from 127.0.0.2 as a device does: at most 20 s in all. The status,
    /// or `curl N` when curl failed (no connection, the time limit).
    static func postAsDevice(_ body: Data, port: Int) async throws -> String {
        let dir = try TemporaryDirectory("curl")
        try body.write(to: URL(fileURLWithPath: dir("request")))
        let result = try await Subprocess.run(
            "curl",
            [
                "-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "20", "--interface", "127.0.0.2", "-H",
                "Content-Type: application/json", "--data-binary", "@" + dir("request"), "http://127.0.0.1:\(port)/v1/reports",
            ], gate: nil)
        return result.status == 0 ? result.output.trimmingCharacters(in: .whitespacesAndNewlines) : "curl \(result.status)"
    }
}

/// A hostile peer on 127.0.0.1: `trickling` connections that send a batch's head and then
/// one byte of its body every 2 s, and `idle` connections that send nothing; each one the
/// collector closes is opened again at once. Runs on a thread of its own (plain sockets).
final class SlowPeers: Sendable {
    struct Tally: Sendable, CustomStringConvertible {
        /// Connections opened.
        var opened = 0
        /// Connections the collector closed (or answered).
        var cut = 0
        /// Trickled bodies the collector cut (closed, or answered `408`).
        var trickledCut = 0
        var description: String { "opened \(opened), cut \(cut), trickled bodies cut \(trickledCut)" }
    }

    let port: Int
    let trickling: Int
    let idle: Int
    private let stopping = Mutex(false)
    /// Left when the peers' thread has closed its sockets.
    private let running = DispatchGroup()
    private let tally = Mutex(Tally())
    /// Rounds in which the trickling peers sent a byte.
    let trickles = Observed(0)

    init(port: Int, trickling: Int, idle: Int) {
        self.port = port
        self.trickling = trickling
        self.idle = idle
    }

    func start() {
        running.enter()
        let thread = Thread { [self] in
            self.run()
            self.running.leave()
        }
        thread.start()
    }

    /// Stops, closes every socket and returns the tally.
    @discardableResult
    func stop() -> Tally {
        stopping.withLock { $0 = true }
        running.wait()
        return tally.withLock { $0 }
    }

    private struct Peer {
        var fd: Int32
        var trickles: Bool
        var headSent = false
    }

    private func run() {
        var peers: [Peer] = []
        for i in 0..<(trickling + idle) {
            if let fd = open() { peers.append(Peer(fd: fd, trickles: i < trickling)) }
        }
        var lastTrickle = Date.distantPast
        while !stopping.withLock({ $0 }) {
            let trickleNow = Date().timeIntervalSince(lastTrickle) >= 2
            if trickleNow { lastTrickle = Date() }
            for i in peers.indices {
                var peer = peers[i]
                if peer.fd >= 0 && (closedOrAnswered(peer.fd) || (peer.trickles && !send(&peer, trickle: trickleNow))) {
                    Glibc.close(peer.fd)
                    peer.fd = -1
                    let trickled = peer.trickles && peer.headSent
                    tally.withLock {
                        $0.cut += 1
                        if trickled { $0.trickledCut += 1 }
                    }
                }
                if peer.fd < 0, let fd = open() { peer = Peer(fd: fd, trickles: peer.trickles) }
                peers[i] = peer
            }
            if trickleNow { trickles.update { $0 += 1 } }
            WorldTime.passBlocking(.milliseconds(250), "the attackers' pace: a round of their sockets")
        }
        for peer in peers where peer.fd >= 0 { Glibc.close(peer.fd) }
    }

    /// A non-blocking connection to the collector (`nil` when the kernel refuses one now).
    private func open() -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 || errno == EINPROGRESS else {
            Glibc.close(fd)
            return nil
        }
        tally.withLock { $0.opened += 1 }
        return fd
    }

    /// Whether the collector closed the connection or answered on it (a refusal).
    private func closedOrAnswered(_ fd: Int32) -> Bool {
        var bytes = [UInt8](repeating: 0, count: 64)
        let n = recv(fd, &bytes, bytes.count, Int32(MSG_DONTWAIT))
        if n >= 0 {
            return true
        }
        return !(errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOTCONN || errno == EINPROGRESS)
    }

    /// Sends the head once connected, then a byte of body when `trickle`; `false` when the
    /// connection is gone.
    private func send(_ peer: inout Peer, trickle: Bool) -> Bool {
        if !peer.headSent {
            let head = Array(
                "POST /v1/reports HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{".utf8)
            let n = Glibc.send(peer.fd, head, head.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            if n == head.count {
                peer.headSent = true
                return true
            }
            return n < 0 && (errno == EAGAIN || errno == ENOTCONN || errno == EINPROGRESS)
        }
        guard trickle else { return true }
        let n = Glibc.send(peer.fd, " ", 1, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
        return n == 1 || (n < 0 && errno == EAGAIN)
    }
}

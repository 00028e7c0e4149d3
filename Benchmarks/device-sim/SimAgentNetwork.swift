import ClientFoundation
import ClientUpdater
import Foundation
import Synchronization

/// One device's network in the agents' world (docs/simulation.md#the-agents-world): the
/// origin the real publisher writes, the site mirror that copies it when the world syncs it
/// (so it lags), and the fleet collector, behind the transport seam the device's engine was
/// opened with. Unlike ``SimNetwork`` it never moves time itself: a chunk
/// sleeps its size over the link's rate on the world's clock, a stall sleeps the request's
/// idle timeout, and the device's rate cap is kept by the request's own `RateLimiter`, as the
/// real transport keeps it, so every wait is a sleeper the world's driver wakes in order.
///
/// While faults are on, each request meets a fault drawn from the seed, the device, the
/// source, the path and how often the device asked it for that path. The origin: 503, 404
/// for a payload, a reset mid-body, other bytes, a stall. The mirror: any status (304, 416,
/// 204, 206, 403, 500, 503, 404), a trickle of a byte every 4 s, a stall, a reset, other
/// bytes of the same length. It also keeps the `window-or-hold` rule's ledger: payload bytes
/// delivered while the device's policy barred them, read on the engine's own time and holds.
final class AgentNetwork: HeadFirstTransport {
    let device: Int
    let seed: UInt64
    let originRoot: String
    let mirrorRoot: String
    let clock: SimClock
    let collector: SimCollector
    let faults: @Sendable () -> Bool
    /// The device's engine's view, once it is open: whether its policy bars payload bytes now,
    /// and the last jump of its wall clock (its download's watcher sees one within 30 s).
    let barred: Mutex<(@Sendable () -> Bool)?> = Mutex(nil)
    let lastJump: @Sendable () -> SimInstant?
    private struct State {
        var attempts: [String: Int] = [:]
        /// Per payload path: whether its download began while the policy allowed it, the
        /// bytes delivered since the policy barred it, and whether it was told.
        var downloads: [String: (beganAllowed: Bool, barredBytes: Int, told: Bool)] = [:]
        var overflow: [String] = []
        var faults = 0
        var requests = 0
        var originAnswered = false
    }
    private let state = Mutex(State())

    init(
        device: Int, seed: UInt64, originRoot: String, mirrorRoot: String, clock: SimClock, collector: SimCollector,
        faults: @escaping @Sendable () -> Bool, lastJump: @escaping @Sendable () -> SimInstant?
    ) {
        self.device = device
        self.seed = seed
        self.originRoot = originRoot
        self.mirrorRoot = mirrorRoot
        self.clock = clock
        self.collector = collector
        self.faults = faults
        self.lastJump = lastJump
    }

    /// The `window-or-hold` breaches found since the last call.
    func drainOverflow() -> [String] {
        state.withLock { state in
            defer { state.overflow = [] }
            return state.overflow
        }
    }

    var figures: (requests: Int, faults: Int) { state.withLock { ($0.requests, $0.faults) } }

    func exchange(_ request: TransportExchange) async throws -> TransportReply {
        guard request.url.host == "collector.sim" else { throw UpdaterError.network(request.url, .dns) }
        return try await collector.post(request, device: device, clock: clock, faults: faults(), waits: true)
    }

    private static func isPayload(_ path: String) -> Bool {
        path.hasSuffix(".tar.gz") || path.contains("/patches/") || path.contains("/files/") || path.contains("/objects/")
    }

    private func fault(_ path: String, origin: Bool) -> SimNetwork.Fault {
        let key = origin ? path : "mirror " + path
        let attempt = state.withLock { state -> Int in
            state.requests += 1
            state.attempts[key, default: 0] += 1
            return state.attempts[key] ?? 1
        }
        guard faults() else { return .none }
        let payload = Self.isPayload(path)
        if !origin {
            var r = SimRandom.stream(seed, ["agent-mirror-fault", "\(device)", path, "\(attempt)"])
            return SimNetwork.mirrorFault(&r, payload: payload)
        }
        var r = SimRandom.stream(seed, ["agent-fault", "\(device)", path, "\(attempt)"])
        if r.chance(0.05) { return .status(503) }
        if payload, r.chance(0.08) { return .status(404) }
        if payload, r.chance(0.06) { return .reset(Int(r.next() % 1000)) }
        if payload, r.chance(0.03) { return .corrupt(Int(r.next() % 1000)) }
        if r.chance(0.02) { return .stall }
        return .none
    }

    /// Whether the device's policy bars payload bytes now, except within 30 s (and a chunk)
    /// of a jump of its wall clock: its download's watcher reads the wall clock at least that often.
    private func barredNow() -> Bool {
        guard let barred = barred.withLock({ $0 }), barred() else { return false }
        if let jump = lastJump(), clock.now.offset - jump.offset <= SimNetwork.jumpSeen + .seconds(Double(SimNetwork.chunk) / 4096) {
            return false
        }
        return true
    }

    func get(
        _ request: TransportRequest, head: @Sendable (TransportResponse) throws -> Void,
        sink: @Sendable (UnsafeRawBufferPointer) throws -> Void
    ) async throws -> TransportResponse {
        let url = request.url
        let origin = url.host == "origin.sim"
        guard origin || url.host == "mirror.sim" else { throw UpdaterError.network(url, .dns) }
        var path = url.path
        if !origin {
            guard path.hasPrefix("/site/") else { return try SimNetwork.answer(404, head: head) }
            path = String(path.dropFirst("/site".count))
        }
        let fault = fault(path, origin: origin)
        AgentWorld.trace("device \(device) GET \(origin ? "" : "mirror ")\(path) \(request.headers) \(fault)")
        if fault != .none { state.withLock { $0.faults += 1 } }
        let payload = Self.isPayload(path)
        if payload {
            let barred = barredNow()
            state.withLock { state in
                if state.downloads[path] == nil { state.downloads[path] = (!barred, 0, false) }
            }
        }
        if case .status(let status) = fault { return try SimNetwork.answer(status, head: head) }
        if fault == .stall {
            try await clock.sleep(for: request.idleTimeout)
            throw UpdaterError.network(url, .timedOut(request.idleTimeout))
        }
        guard let data = FileManager.default.contents(atPath: (origin ? originRoot : mirrorRoot) + path) else {
            return try SimNetwork.answer(404, head: head)
        }
        let body = [UInt8](data)
        let start: Int
        let response: TransportResponse
        switch SimNetwork.conditional(request, body: body) {
        case .answer(let code, let extra): return try SimNetwork.answer(code, head: head, extra: extra)
        case .body(let code, let from, let headers):
            start = from
            response = TransportResponse(status: code, headers: headers)
            try head(response)
        }
        var sent = start
        var trickled = 0
        while sent < body.count {
            var count = min(SimNetwork.chunk, body.count - sent)
            var took = Duration.seconds(Double(count) / (origin ? SimNetwork.originRate : SimNetwork.mirrorRate))
            if fault == .trickle, trickled < 10_000 {
                count = 1
                took = .seconds(4)
                trickled += 1
            }
            if case .reset(let share) = fault, sent >= start + (body.count - start) * share / 1000 { throw UpdaterError.network(url, .reset) }
            // The link's time, then the device's cap, as the real transport admits each chunk.
            try await clock.sleep(for: took)
            if payload, let limiter = request.rateLimiter { try await limiter.admit(count) }
            try Task.checkCancellation()
            var bytes = Array(body[sent..<(sent + count)])
            if case .corrupt(let share) = fault {
                let at = body.count * share / 1000
                if at >= sent, at < sent + count { bytes[at - sent] ^= 0x55 }
            }
            if payload, barredNow() {
                let at = SimRun.stamp(clock.now)
                state.withLock { state in
                    guard var download = state.downloads[path] else { return }
                    download.barredBytes += count
                    if !download.told, !download.beganAllowed || download.barredBytes > SimNetwork.chunk {
                        download.told = true
                        state.overflow.append(
                            "device \(device) at \(at): \(path) "
                                + (download.beganAllowed ? "went on past the chunk in flight" : "started") + " while its policy bars downloads")
                    }
                    state.downloads[path] = download
                }
            }
            try bytes.withUnsafeBytes { try sink($0) }
            sent += count
        }
        if payload { _ = state.withLock { $0.downloads.removeValue(forKey: path) } }
        return response
    }
}

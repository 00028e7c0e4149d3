import ClientUpdater
import Foundation
import Synchronization

/// The simulated network: the origin (`https://origin.sim/…`, the release folder the real
/// publisher writes) and a site mirror (`http://mirror.sim/site/…`, a copy of it the
/// simulation syncs now and then, so it lags), behind the device's own transport seam.
///
/// Time passes while bytes travel: each chunk moves the device's clock by its size over
/// the link's rate, so a download window closes, or a hold starts, in the middle of a body.
/// While faults are on, each request meets a fault drawn from the seed, the device, the
/// check, the URL and how often this check asked for that URL, never from the order in
/// which parallel requests arrived: the origin answers 503, 404 for a payload (an edge that
/// lags), resets mid-body or stalls; the mirror answers any status, trickles, stalls,
/// resets or sends other bytes of the same length.
final class SimNetwork: HeadFirstTransport {
    /// What the network knows of the check in flight.
    struct Context: Sendable {
        var device: Int
        var check: Int
        /// The device's clock: time passes on it while its bytes travel.
        var clock: SimClock
        var faults: Bool
        /// The device's wall clock.
        var wall: @Sendable () -> Date
        /// True when the device's policy allows no payload byte now (its wall clock outside
        /// its windows, or a hold in force on its monotonic clock).
        var barred: @Sendable () -> Bool
        /// The device's last wall-clock jump at or before now: a window its wall clock jumped
        /// out of is seen by the download's watcher within ``SimNetwork/jumpSeen``.
        var lastJump: @Sendable () -> SimInstant? = { nil }
        /// How many stops watch a download of the device on its clock (`racingStops`: the
        /// holds' waiter, and the windows' watcher when it has windows); 0: do not wait for them.
        var watchers = 0
    }

    /// What a restriction request of the check was answered.
    enum RestrictionAnswer: Equatable, Sendable {
        case bytes([UInt8])
        /// `404` or `410`: the device reads "no restriction".
        case absent
        /// `304`: the device keeps the copy whose ETag its request named (nil: none named).
        case notModified(String?)
    }

    /// A fault one request meets.
    enum Fault: Equatable {
        case none
        case status(Int)
        /// Reset after this share of the body (per mille).
        case reset(Int)
        case stall
        case trickle
        /// One byte changed at this share of the body (per mille).
        case corrupt(Int)
    }

    /// What the network saw during one check.
    struct Ledger: Sendable {
        /// The origin answered the manifest (200 or 304).
        var originAnsweredManifest = false
        /// Payload bytes delivered while the device's policy barred them, per request, beyond
        /// the one chunk in flight when the bar began.
        var barredOverflow: [String] = []
        var requests = 0
        var bytes: Int64 = 0
        var mirrorBytes: Int64 = 0
        /// Faults met by the check's requests (a file list's objects are fetched one at a
        /// time in the simulation: ``SimRun/makeUpdater(layout:config:wall:holds:network:)``).
        var faults = 0
        /// The manifests served (200), in order.
        var manifests: [[UInt8]] = []
        /// The answers to restriction requests, in order, and whether each came from the mirror.
        var restrictions: [(answer: RestrictionAnswer, mirror: Bool)] = []
        /// The indexes served (200).
        var indexes: [[UInt8]] = []
        /// The ETags of the manifests a `304` told the device it still has (its request's
        /// `If-None-Match`): a `304` decides on the manifest the device kept, which after a
        /// kill may be older than the newest it was served.
        var manifestsUnchanged: [String] = []
    }

    /// How long a download's watcher may take to see that a wall-clock jump closed its
    /// window (`racingStops` reads the wall clock at least every 30 s of monotonic time),
    /// plus the chunk in flight.
    static let jumpSeen: Duration = .seconds(30)

    static let chunk = 16 * 1024
    static let originRate = 4_000_000.0
    static let mirrorRate = 40_000_000.0

    let seed: UInt64
    let originRoot: String
    let mirrorRoot: String
    /// Told each manifest and restriction answer as it is served (a crash worker writes them
    /// out at once: its process may be killed before the check ends).
    let served: (@Sendable (String) -> Void)?
    private struct State {
        var context: Context?
        var attempts: [String: Int] = [:]
        var ledger = Ledger()
        /// Per payload path of the check: whether its download began while the policy allowed
        /// it, and the bytes delivered since the policy barred it (across the requests of
        /// that download: a mirror's failover to the origin, a retry, a resume).
        var downloads: [String: (beganAllowed: Bool, barredBytes: Int, reported: Bool)] = [:]
    }
    private let state = Mutex(State())

    /// The fleet collector the devices' reports go to (`https://collector.sim/`).
    let collector: SimCollector

    init(seed: UInt64, originRoot: String, mirrorRoot: String, served: (@Sendable (String) -> Void)? = nil) {
        self.served = served
        self.collector = SimCollector(seed: seed)
        self.seed = seed
        self.originRoot = originRoot
        self.mirrorRoot = mirrorRoot
    }

    /// Starts the ledger of a check.
    func begin(_ context: Context) {
        state.withLock { state in
            state.context = context
            state.attempts = [:]
            state.ledger = Ledger()
            state.downloads = [:]
        }
    }

    /// Ends the check: its ledger.
    func end() -> Ledger {
        state.withLock { state in
            state.context = nil
            return state.ledger
        }
    }

    private static func isPayload(_ path: String) -> Bool {
        path.hasSuffix(".tar.gz") || path.contains("/patches/") || path.contains("/files/") || path.contains("/objects/")
    }

    private func fault(origin: Bool, path: String, context: Context?) -> Fault {
        guard let context, context.faults else { return .none }
        let attempt = state.withLock { state -> Int in
            let key = "\(origin) \(path)"
            state.attempts[key, default: 0] += 1
            return state.attempts[key] ?? 1
        }
        var r = SimRandom.stream(seed, ["fault", "\(context.device)", "\(context.check)", origin ? "origin" : "mirror", path, "\(attempt)"])
        let payload = Self.isPayload(path)
        if origin {
            if r.chance(0.05) { return .status(503) }
            if payload, r.chance(0.10) { return .status(404) }
            if payload, r.chance(0.06) { return .reset(Int(r.next() % 1000)) }
            if payload, r.chance(0.03) { return .corrupt(Int(r.next() % 1000)) }
            if r.chance(0.02) { return .stall }
            return .none
        }
        return Self.mirrorFault(&r, payload: payload)
    }

    /// A mirror's fault, drawn from `r`: any status, a trickle, a stall, a reset, other bytes
    /// (the same in both worlds).
    static func mirrorFault(_ r: inout SimRandom, payload: Bool) -> Fault {
        if r.chance(0.10) { return .status([304, 416, 204, 206, 403, 500, 503, 404][Int(r.next() % 8)]) }
        if payload, r.chance(0.08) { return .trickle }
        if r.chance(0.03) { return .stall }
        if payload, r.chance(0.06) { return .reset(Int(r.next() % 1000)) }
        if payload, r.chance(0.06) { return .corrupt(Int(r.next() % 1000)) }
        return .none
    }

    /// A report batch's `POST` goes to the collector, on the device's clock, with the faults
    /// of the step it is sent in.
    func exchange(_ request: TransportExchange) async throws -> TransportReply {
        guard request.url.host == "collector.sim" else { throw UpdaterError.network(request.url, .dns) }
        guard let context = state.withLock({ $0.context }) else { throw UpdaterError.network(request.url, .refused) }
        return try await collector.post(request, device: context.device, clock: context.clock, faults: context.faults)
    }

    func get(
        _ request: TransportRequest, head: @Sendable (TransportResponse) throws -> Void,
        sink: @Sendable (UnsafeRawBufferPointer) throws -> Void
    ) async throws -> TransportResponse {
        let url = request.url
        let host = url.host ?? ""
        let origin = host == "origin.sim"
        guard origin || host == "mirror.sim" else { throw UpdaterError.network(url, .dns) }
        var path = url.path
        if !origin {
            guard path.hasPrefix("/site/") else { return try Self.answer(404, head: head) }
            path = String(path.dropFirst("/site".count))
        }
        let context = state.withLock { $0.context }
        guard let clock = context?.clock else { throw UpdaterError.network(url, .refused) }
        let fault = fault(origin: origin, path: path, context: context)
        state.withLock { state in
            state.ledger.requests += 1
            if fault != .none { state.ledger.faults += 1 }
        }
        if ProcessInfo.processInfo.environment["SIM_TRACE"] != nil {
            FileHandle.standardError.write(
                Data(
                    "trace: device \(context?.device ?? -1) check \(context?.check ?? -1) \(origin ? "origin" : "mirror") \(path) \(request.headers) \(fault)\n"
                        .utf8))
        }
        // A payload download that begins while the policy bars downloads may deliver nothing; one
        // in flight when the bar begins, at most the chunk it has in flight, whichever source its
        // requests go to.
        if Self.isPayload(path), let context {
            var barred = context.barred() && !Self.justJumped(context, clock: clock)
            if barred {
                // Time crossed the bar before this request (a retry's backoff, a mirror's stall
                // before the failover): the device's stop, which time woke, gets its moment to
                // cancel the download first, as for a chunk below. Without it the outcome would
                // be a race between two tasks in real time (the stop, and this request meeting
                // its fault), decided by the machine's load.
                await Self.awaitStop()
                try Task.checkCancellation()
                barred = context.barred() && !Self.justJumped(context, clock: clock)
            }
            state.withLock { state in
                if state.downloads[path] == nil { state.downloads[path] = (!barred, 0, false) }
            }
        }
        let isRestriction = path.hasSuffix("/restriction.json")
        func noteRestriction(_ answer: RestrictionAnswer) {
            state.withLock { $0.ledger.restrictions.append((answer, !origin)) }
            switch answer {
            case .bytes(let bytes): served?("restriction: " + Data(bytes).base64EncodedString())
            case .absent: served?("restriction: absent")
            case .notModified(let tag): served?("restriction: unchanged" + (tag.map { " " + $0 } ?? ""))
            }
        }
        let isManifest = path.hasSuffix("/manifest.json")
        let requestTag = request.headers.first(where: { $0.key.lowercased() == "if-none-match" })?.value
        func noteManifestUnchanged() {
            guard let tag = request.headers.first(where: { $0.key.lowercased() == "if-none-match" })?.value else { return }
            state.withLock { $0.ledger.manifestsUnchanged.append(tag) }
            served?("manifest unchanged: " + tag)
        }
        if case .status(let status) = fault {
            if isManifest, status == 304 { noteManifestUnchanged() }
            if isRestriction, status == 404 || status == 410 { noteRestriction(.absent) }
            if isRestriction, status == 304, request.headers.keys.contains(where: { $0.lowercased() == "if-none-match" }) {
                noteRestriction(.notModified(requestTag))
            }
            return try Self.answer(status, head: head)
        }
        if fault == .stall {
            if Self.isPayload(path), let context { await Self.parked(context, clock: clock) }
            clock.advance(by: request.idleTimeout)
            throw UpdaterError.network(url, .timedOut(request.idleTimeout))
        }
        guard let data = FileManager.default.contents(atPath: (origin ? originRoot : mirrorRoot) + path) else {
            if isRestriction { noteRestriction(.absent) }
            return try Self.answer(404, head: head)
        }
        let body = [UInt8](data)
        if path.hasSuffix("manifest.json"), origin { state.withLock { $0.ledger.originAnsweredManifest = true } }
        let start: Int
        let status: Int
        let response: TransportResponse
        switch Self.conditional(request, body: body) {
        case .answer(let code, let extra):
            if code == 304, let tag = requestTag {
                if isRestriction { noteRestriction(.notModified(tag)) }
                if isManifest { noteManifestUnchanged() }
            }
            return try Self.answer(code, head: head, extra: extra)
        case .body(let code, let from, let headers):
            (status, start) = (code, from)
            response = TransportResponse(status: code, headers: headers)
            try head(response)
        }
        if status == 200 {
            // What the device was told, for the rules it must keep (judged once the check ends).
            state.withLock { state in
                if path.hasSuffix("/manifest.json") {
                    state.ledger.manifests.append(body)
                    served?("manifest: " + Data(body).base64EncodedString())
                }
                if path.hasSuffix("/index.json") { state.ledger.indexes.append(body) }
            }
            if isRestriction { noteRestriction(.bytes(body)) }
        }
        let payload = Self.isPayload(path)
        // A rate cap is kept by the device's transport, which reads no faster: here the link
        // is as slow as the cap (the simulation does not wait in the limiter itself).
        let cap = request.rateLimiter?.rate.map { Double($0.bytesPerSecond) }
        let rate = min(origin ? Self.originRate : Self.mirrorRate, cap ?? .infinity)
        var sent = start
        var trickled = 0
        while sent < body.count {
            try Task.checkCancellation()
            var count = min(Self.chunk, body.count - sent)
            var took = Duration.seconds(Double(count) / rate)
            if fault == .trickle, trickled < 10_000 {
                count = 1
                took = .seconds(4)
                trickled += 1
            }
            if case .reset(let share) = fault, sent >= start + (body.count - start) * share / 1000 {
                throw UpdaterError.network(url, .reset)
            }
            if payload, let context { await Self.parked(context, clock: clock) }
            clock.advance(by: took)
            await Self.settle()
            try Task.checkCancellation()
            if payload, let context, context.barred(), !Self.justJumped(context, clock: clock) {
                // The bar began: the device's stop (a window's close, a hold) is a task of its
                // own that time just woke. It is given a moment of real time to cancel this
                // download, however loaded the machine: the rule is about the device, not
                // about how soon the scheduler runs it.
                await Self.awaitStop()
                try Task.checkCancellation()
            }
            var bytes = Array(body[sent..<(sent + count)])
            if case .corrupt(let share) = fault {
                let at = body.count * share / 1000
                if at >= sent, at < sent + count { bytes[at - sent] ^= 0x55 }
            }
            if payload, let context, context.barred(), !Self.justJumped(context, clock: clock) {
                let stamp = RFC3339Stamp.string(context.wall())
                state.withLock { state in
                    guard var download = state.downloads[path] else { return }
                    download.barredBytes += count
                    if !download.reported, !download.beganAllowed || download.barredBytes > Self.chunk {
                        download.reported = true
                        state.ledger.barredOverflow.append(
                            "device \(context.device) check \(context.check): \(path) "
                                + (download.beganAllowed ? "went on past the chunk in flight" : "started")
                                + " while its policy bars downloads (\(stamp))")
                    }
                    state.downloads[path] = download
                }
            }
            try bytes.withUnsafeBytes { try sink($0) }
            sent += count
            state.withLock { state in
                state.ledger.bytes += Int64(count)
                if !origin { state.ledger.mirrorBytes += Int64(count) }
            }
        }
        return response
    }

    /// The ledger of what a crash worker's lines say it was served.
    static func ledger(fromServed lines: [String]) -> Ledger {
        var ledger = Ledger()
        for line in lines {
            if line.hasPrefix("manifest: "), let data = Data(base64Encoded: String(line.dropFirst(10))) {
                ledger.manifests.append([UInt8](data))
            } else if line.hasPrefix("manifest unchanged: ") {
                ledger.manifestsUnchanged.append(String(line.dropFirst(20)))
            } else if line.hasPrefix("restriction: ") {
                let rest = String(line.dropFirst(13))
                let answer: RestrictionAnswer? =
                    rest == "absent"
                    ? .absent
                    : rest.hasPrefix("unchanged")
                        ? .notModified(rest == "unchanged" ? nil : String(rest.dropFirst("unchanged ".count)))
                        : Data(base64Encoded: rest).map { .bytes([UInt8]($0)) }
                if let answer { ledger.restrictions.append((answer, false)) }
            }
        }
        return ledger
    }

    /// Whether the device's wall clock jumped within ``jumpSeen`` (and a chunk's time): its
    /// download's watcher may not have read the wall clock since.
    private static func justJumped(_ context: Context, clock: SimClock) -> Bool {
        guard let jump = context.lastJump() else { return false }
        return clock.now.offset - jump.offset <= jumpSeen + .seconds(Double(chunk) / 4096)
    }

    /// Waits until the download's stops have read the clocks and wait on the device's clock
    /// (at most 5 s of real time): each must see time move from where it looked, or the
    /// moment a stop first reads the wall clock (before a jump, or after it) would be decided
    /// by how soon the scheduler ran its task, and a seed would not replay.
    private static func parked(_ context: Context, clock: SimClock) async {
        guard context.watchers > 0 else { return }
        let deadline = ContinuousClock.now + .seconds(5)
        while !Task.isCancelled, clock.sleeperCount < context.watchers, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(1))
        }
        if ProcessInfo.processInfo.environment["SIM_TRACE"] != nil, clock.sleeperCount < context.watchers {
            FileHandle.standardError.write(Data("trace: device \(context.device) check \(context.check): its stops did not wait on its clock\n".utf8))
        }
    }

    /// Gives the device's stop (a task that time woke) up to 2 s of real time to cancel the
    /// download in flight, however loaded the machine.
    private static func awaitStop() async {
        await settle()
        let deadline = ContinuousClock.now + .seconds(2)
        while !Task.isCancelled, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(1)) }
    }

    /// Lets the tasks that time just woke (a window's close, a hold's start) run before the
    /// next chunk: they cancel the download they stop.
    private static func settle() async {
        for _ in 0..<64 { await Task.yield() }
    }

    /// How a CDN answers a `GET` of `body` with the request's `If-None-Match` and `Range`: a
    /// bodiless answer (`304`, `416`), or the body from `start` with its status and headers.
    enum Conditional {
        case answer(Int, extra: [String: String])
        case body(Int, start: Int, headers: [String: String])
    }

    static func conditional(_ request: TransportRequest, body: [UInt8]) -> Conditional {
        let etag = "\"\(body.count)-\(fnv(body))\""
        let headers = Dictionary(request.headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { a, _ in a })
        if let tag = headers["if-none-match"], tag == etag { return .answer(304, extra: ["etag": etag]) }
        var start = 0
        var status = 200
        var extra = ["etag": etag]
        if let range = headers["range"], range.hasPrefix("bytes="), range.hasSuffix("-"), let from = Int(range.dropFirst(6).dropLast()) {
            guard from < body.count else { return .answer(416, extra: ["content-range": "bytes */\(body.count)"]) }
            start = from
            status = 206
            extra["content-range"] = "bytes \(from)-\(body.count - 1)/\(body.count)"
        }
        extra["content-length"] = "\(body.count - start)"
        return .body(status, start: start, headers: extra)
    }

    /// A bodiless answer, told to `head`.
    static func answer(_ status: Int, head: @Sendable (TransportResponse) throws -> Void, extra: [String: String] = [:]) throws
        -> TransportResponse
    {
        var headers = extra
        headers["content-length"] = "0"
        let response = TransportResponse(status: status, headers: headers)
        try head(response)
        return response
    }

    static func fnv(_ bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        return String(hash, radix: 16)
    }
}

/// RFC 3339 in UTC, to the second, for the run's lines.
enum RFC3339Stamp {
    static func string(_ date: Date) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime]
        return f.string(from: date)
    }
}

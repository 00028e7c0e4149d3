import ClientFoundation
import ClientUpdater
import Foundation
import SignedManifest
import Synchronization

/// The fleet collector behind the simulated network (`https://collector.sim/v1/reports`):
/// it takes the batches the devices' real `ReportSender` posts and keeps each report once by
/// its identity, (device, stream, seq), as the real collector's store does
/// (docs/fleet-reports.md#the-collector). While faults last, a batch meets a fault drawn from
/// the seed, the device, the batch's first seq and how often that batch came: `503` with
/// `Retry-After`, a reset before the batch is read, a reset after it was stored (the device
/// never hears it went through, and sends it again), an answer slower than the request's
/// limit (stored or not), a `413` (at the batch's first attempt only: three refusals of one
/// batch drop it by design, which is not the loss the `reports` invariant looks for).
///
/// A stand-in for the collector's ingest (`FleetCollector` is not among this program's
/// dependencies): the batch's JSON is read with `JSONSerialization`, its signature checked
/// with the device's key, the zstd body opened with the system's libzstd.
final class SimCollector: Sendable {
    /// What the collector took, for the run's figures.
    struct Figures: Sendable {
        var batches = 0
        var stored = 0
        /// Reports that came again (the collector stored them before): at-least-once delivery.
        var duplicates = 0
        var faults = 0
    }

    private struct State {
        /// Each report stored, by "device stream seq": its JSON with sorted keys.
        var stored: [String: Data] = [:]
        /// Per device (its id), the streams it sent and the seqs stored in each.
        var seqs: [String: [String: Set<Int64>]] = [:]
        /// How often each batch came: "device first-seq" → attempts.
        var attempts: [String: Int] = [:]
        var figures = Figures()
        /// Rule breaks seen at ingest, drained by the run.
        var problems: [String] = []
    }
    private let seed: UInt64
    private let state = Mutex(State())

    init(seed: UInt64) { self.seed = seed }

    var figures: Figures { state.withLock { $0.figures } }

    /// The seqs stored for the device with id `device`, per stream.
    func seqs(device: String) -> [String: Set<Int64>] { state.withLock { $0.seqs[device] ?? [:] } }

    /// The rule breaks seen since the last call.
    func drainProblems() -> [String] {
        state.withLock { state in
            defer { state.problems = [] }
            return state.problems
        }
    }

    /// One `POST /v1/reports` of device `device` (the network's context: its clock, whether
    /// faults are on).
    /// `waits`: a late answer sleeps on the clock (the agents' world, where only its driver
    /// moves time); else it moves the clock itself.
    func post(_ request: TransportExchange, device: Int, clock: SimClock, faults: Bool, waits: Bool = false) async throws -> TransportReply {
        guard request.method == "POST", request.url.path == "/v1/reports" else { return Self.reply(404, error: "no such route") }
        let headers = Dictionary(request.headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { a, _ in a })
        var json = request.body
        if headers["content-encoding"] == "zstd" {
            guard let opened = SimZstd.decompress(request.body) else { return Self.reply(400, error: "the zstd body does not decompress") }
            json = opened
        }
        guard let batch = try? JSONSerialization.jsonObject(with: json) as? [String: Any], let id = batch["device"] as? String,
            let reports = batch["reports"] as? [[String: Any]], let first = (reports.first?["seq"] as? NSNumber)?.int64Value
        else {
            record("device \(device) sent a batch that is not one (\(json.count) bytes)")
            return Self.reply(400, error: "not a batch")
        }
        let stream = batch["stream"] as? String ?? ""
        if let key = batch["key"] as? String {
            let signature = headers["clientctl-signature"].flatMap(LowerHex.decode) ?? []
            guard let raw = LowerHex.decode(key), Ed25519.isValidSignature(signature, for: [UInt8](json), rawPublicKey: raw) else {
                record("device \(device): a batch (seq \(first)…) whose signature does not match its bytes")
                return Self.reply(401, error: "the signature does not match the batch")
            }
        }
        let attempt = state.withLock { state -> Int in
            state.figures.batches += 1
            state.attempts["\(device) \(first)", default: 0] += 1
            return state.attempts["\(device) \(first)"] ?? 1
        }
        var r = SimRandom.stream(seed, ["collector", "\(device)", "\(first)", "\(attempt)"])
        guard faults else { return store(id: id, stream: stream, device: device, reports) }
        if r.chance(0.08) {
            countFault()
            return TransportReply(status: 503, headers: ["retry-after": "\(30 + r.next() % 90)"], body: Data("{\"error\": \"busy\"}".utf8))
        }
        if r.chance(0.05) {
            countFault()
            throw UpdaterError.network(request.url, .reset)
        }
        if r.chance(0.05) {
            // Stored, and the connection reset before the answer: the device sends it again.
            countFault()
            _ = store(id: id, stream: stream, device: device, reports)
            throw UpdaterError.network(request.url, .reset)
        }
        if r.chance(0.04) {
            countFault()
            if waits { try await clock.sleep(for: request.timeLimit) } else { clock.advance(by: request.timeLimit) }
            if r.chance(0.5) { _ = store(id: id, stream: stream, device: device, reports) }
            throw UpdaterError.network(request.url, .timedOut(request.timeLimit))
        }
        if attempt == 1, r.chance(0.04) {
            countFault()
            return Self.reply(413, error: "the batch is larger than this collector takes")
        }
        return store(id: id, stream: stream, device: device, reports)
    }

    private func countFault() { state.withLock { $0.figures.faults += 1 } }

    private func record(_ problem: String) { state.withLock { $0.problems.append(problem) } }

    /// Stores the reports not stored yet, by (device, stream, seq); one stored before with
    /// other content is a rule broken (two reports under one identity: one of them counted
    /// and the other lost).
    private func store(id: String, stream: String, device: Int, _ reports: [[String: Any]]) -> TransportReply {
        var accepted = 0
        var duplicates = 0
        for report in reports {
            guard let seq = (report["seq"] as? NSNumber)?.int64Value,
                let content = try? JSONSerialization.data(withJSONObject: report, options: [.sortedKeys])
            else { continue }
            let key = "\(id) \(stream) \(seq)"
            state.withLock { state in
                if let before = state.stored[key] {
                    duplicates += 1
                    state.figures.duplicates += 1
                    if before != content {
                        state.problems.append(
                            "device \(device): seq \(seq) came as two different reports (\(String(decoding: before, as: UTF8.self)) and "
                                + "\(String(decoding: content, as: UTF8.self)))")
                    }
                    return
                }
                state.stored[key] = content
                if ProcessInfo.processInfo.environment["SIM_TRACE"] != nil {
                    FileHandle.standardError.write(
                        Data("trace: collector device \(device) stored \(String(decoding: content, as: UTF8.self))\n".utf8))
                }
                state.seqs[id, default: [:]][stream, default: []].insert(seq)
                state.figures.stored += 1
                accepted += 1
            }
        }
        return TransportReply(
            status: 200, headers: ["content-type": "application/json"], body: Data("{\"accepted\": \(accepted), \"duplicates\": \(duplicates)}".utf8))
    }

    private static func reply(_ status: Int, error: String) -> TransportReply {
        TransportReply(status: status, headers: ["content-type": "application/json"], body: Data("{\"error\": \"\(error)\"}".utf8))
    }
}

/// The system's libzstd, opened at run time: the simulated collector reads the batches the
/// devices compress (this program does not depend on the C module the collector uses).
enum SimZstd {
    private typealias Decompress = @convention(c) (UnsafeMutableRawPointer?, Int, UnsafeRawPointer?, Int) -> Int
    private typealias IsError = @convention(c) (Int) -> UInt32
    private typealias ContentSize = @convention(c) (UnsafeRawPointer?, Int) -> UInt64

    private static let functions: (Decompress, IsError, ContentSize)? = {
        guard let handle = dlopen("libzstd.so.1", RTLD_NOW) ?? dlopen("libzstd.so", RTLD_NOW),
            let decompress = dlsym(handle, "ZSTD_decompress"), let isError = dlsym(handle, "ZSTD_isError"),
            let size = dlsym(handle, "ZSTD_getFrameContentSize")
        else { return nil }
        return (
            unsafeBitCast(decompress, to: Decompress.self), unsafeBitCast(isError, to: IsError.self), unsafeBitCast(size, to: ContentSize.self)
        )
    }()

    /// The bytes of one zstd frame that says its size (at most 1 MiB), or nil.
    static func decompress(_ data: Data) -> Data? {
        guard let (decompress, isError, contentSize) = functions else { return nil }
        return data.withUnsafeBytes { source -> Data? in
            let size = contentSize(source.baseAddress, source.count)
            guard size <= 1 << 20 else { return nil }
            var out = Data(count: Int(size))
            let written = out.withUnsafeMutableBytes { target in decompress(target.baseAddress, target.count, source.baseAddress, source.count) }
            guard isError(written) == 0, written == Int(size) else { return nil }
            return out
        }
    }
}

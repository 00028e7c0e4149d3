// collector-bench: the load generator of Scripts/bench/collector.
//
//   collector-bench ingest URL REPORTS BATCH CONCURRENCY DEVICES RUN [zstd|plain] [signed]
//       POSTs REPORTS reports to URL/v1/reports in batches of BATCH, CONCURRENCY requests
//       in flight, from DEVICES devices whose ids start with RUN (8 hex digits: each run
//       its own devices, so every report is new); every (device, seq) is sent once.
//       Batches are zstd-compressed (as devices send them) or plain JSON; `signed`: schema 2,
//       each device with an Ed25519 key of its own, every batch signed as devices sign it
//       (the keys and signatures made before the clock starts, as on devices of their own).
//   collector-bench floor DBPATH REPORTS BATCH DEVICES RUN [signed]
//       Writes the reports of the same batches into a new SQLite database at DBPATH as a
//       plain program would (Floor.swift): the floor the collector is measured against.
//
// Prints one JSON line: reports, batches, seconds, reports per second, accepted,
// duplicates and the count of each HTTP status. Exits 1 when a batch was not answered 200.
// The batches are written by hand (not by a JSON encoder) and every request's bytes are made
// before the clock starts; CONCURRENCY threads each send theirs on a keep-alive connection
// of its own (KeepAliveClient.swift), so that the generator costs little of the 2 cores it
// shares with the collector. The first and last batches are read back with the
// collector's own reader (ReportBatch.decode) to prove the bytes are valid batches.
internal import CZstd
import FleetReports
import Foundation
import SignedManifest
import Synchronization

/// The arguments, a floor run's laid out as an ingest run's (one writer, plain JSON).
let args: [String] = {
    let given = CommandLine.arguments
    guard given.count >= 7, given[1] == "floor" else { return given }
    return Array(given[0...4]) + ["1", given[5], given[6], "plain"] + given.dropFirst(7)
}()
let floorRun = args.count > 1 && args[1] == "floor"
guard args.count >= 8, args[1] == "ingest" || floorRun, let base = URL(string: args[2]), let total = Int(args[3]), let perBatch = Int(args[4]),
    let concurrency = Int(args[5]), let devices = Int(args[6]), args[7].count == 8, UInt32(args[7], radix: 16) != nil,
    total > 0, (1...500).contains(perBatch), concurrency > 0, devices > 0
else {
    FileHandle.standardError.write(
        Data(
            ("usage: collector-bench ingest URL REPORTS BATCH(1-500) CONCURRENCY DEVICES RUN(8 hex) [zstd|plain] [signed]\n"
                + "       collector-bench floor DBPATH REPORTS BATCH(1-500) DEVICES RUN(8 hex) [signed]\n").utf8))
    exit(64)
}
let run = args[7].lowercased()
let compress = args.count < 9 || args[8] == "zstd"
let signed = args.count > 9 && args[9] == "signed"
/// Each device's key (signed runs), made before the clock starts, as are its batches'
/// signatures (``signatures``). `nonisolated(unsafe)`: `Ed25519.PrivateKey` owns an OpenSSL
/// key that is only read after this line (each signature makes its own context).
nonisolated(unsafe) let keys: [Ed25519.PrivateKey] = signed ? (0..<devices).compactMap { _ in try? Ed25519.PrivateKey.generate() } : []
let publicKeys: [String] = keys.map { $0.publicKey.rawRepresentation.map { String(format: "%02x", $0) }.joined() }
let endpoint = base.appendingPathComponent("v1/reports").absoluteString
let batches = (total + perBatch - 1) / perBatch
let start = Date(timeIntervalSince1970: 1_764_000_000)

/// Batch `k`'s JSON: device `k % devices`, its `k / devices`-th batch (seqs follow on).
func json(_ k: Int) -> [UInt8] {
    let deviceIndex = k % devices
    let round = k / devices
    let count = min(perBatch, total - k * perBatch)
    let hex = String(deviceIndex, radix: 16)
    let device = run + String(repeating: "0", count: 24 - hex.count) + hex
    var s =
        signed
        ? "{\"schema\":2,\"device\":\"\(device)\",\"key\":\"\(publicKeys[deviceIndex])\",\"stream\":\"00000000000000\(run.prefix(2))\","
            + "\"app\":\"com.example.bench\",\"channel\":\"stable\",\"reports\":["
        : "{\"schema\":1,\"device\":\"\(device)\",\"app\":\"com.example.bench\",\"channel\":\"stable\",\"reports\":["
    s.reserveCapacity(120 * count + 120)
    for i in 0..<count {
        let seq = round * perBatch + i + 1
        let time = Int64(start.timeIntervalSince1970 * 1000) + Int64(seq) * 60_000 + Int64(deviceIndex % 1000)
        if i > 0 { s += "," }
        s += "{\"seq\":\(seq),\"time\":\(time),"
        switch seq % 8 {
        case 0: s += "\"type\":\"heartbeat\",\"running\":\"1.0.0\""
        case 1: s += "\"type\":\"update-found\",\"running\":\"1.0.0\",\"version\":\"1.1.0\",\"rollout\":{\"percent\":25,\"paused\":false}"
        case 2: s += "\"type\":\"downloaded\",\"running\":\"1.0.0\",\"version\":\"1.1.0\",\"via\":\"patch\",\"bytes\":\(100_000 + seq),\"ms\":420"
        case 3: s += "\"type\":\"installed\",\"running\":\"1.0.0\",\"version\":\"1.1.0\""
        case 4: s += "\"type\":\"trial-started\",\"running\":\"1.1.0\",\"version\":\"1.1.0\",\"shell\":\"2.0.0\""
        case 5: s += "\"type\":\"committed\",\"running\":\"1.1.0\",\"version\":\"1.1.0\",\"ms\":\(300 + seq % 997)"
        case 6: s += "\"type\":\"rolled-back\",\"running\":\"1.0.0\",\"version\":\"1.1.0\",\"reason\":\"timed-out\""
        default: s += "\"type\":\"web-process-died\",\"running\":\"1.1.0\",\"reason\":\"crashed\",\"detail\":\"signal 11\""
        }
        s += "}"
    }
    s += "]}"
    return Array(s.utf8)
}

/// Each batch's signature (signed runs), made before the clock starts: a device signs on
/// its own CPU, so the collector's 2 cores are not shared with signing while it is timed.
let signatures: [String] =
    signed && !floorRun
    ? (0..<batches).map { k in (try? keys[k % devices].signature(for: json(k)))?.map { String(format: "%02x", $0) }.joined() ?? "" } : []

/// Batch `k` as sent: zstd-compressed (level 3) or plain, and its signature (signed runs).
func body(_ k: Int) -> (bytes: [UInt8], signature: String?) {
    let json = json(k)
    let signature = signed ? signatures[k] : nil
    guard compress else { return (json, signature) }
    var out = [UInt8](repeating: 0, count: ZSTD_compressBound(json.count))
    let n = out.withUnsafeMutableBytes { o in json.withUnsafeBytes { i in ZSTD_compress(o.baseAddress, o.count, i.baseAddress, i.count, 3) } }
    guard ZSTD_isError(n) == 0 else { fatalError("zstd: \(String(cString: ZSTD_getErrorName(n)))") }
    return (Array(out.prefix(n)), signature)
}

// The bytes are a valid batch by the collector's own reader.
do {
    _ = try ReportBatch.decode(json(0))
    _ = try ReportBatch.decode(json(batches - 1))
} catch {
    FileHandle.standardError.write(Data("collector-bench: the generated batch is not valid: \(error)\n".utf8))
    exit(1)
}

if floorRun {
    do {
        let seconds = try writeFloor(path: args[2], batches: batches, makeBatch: json)
        print(
            "{\"reports\":\(total),\"batches\":\(batches),\"seconds\":\(String(format: "%.3f", seconds)),"
                + "\"reportsPerSecond\":\(Int(Double(total) / seconds)),\"accepted\":\(total)}")
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("collector-bench floor: \(error)\n".utf8))
        exit(1)
    }
}

/// Batch `k`'s whole request, made before the clock starts: head and body.
func request(_ k: Int, host: String, path: String) -> [UInt8] {
    let sent = body(k)
    var head = "POST \(path) HTTP/1.1\r\nHost: \(host)\r\nContent-Type: application/json\r\n"
    if compress { head += "Content-Encoding: zstd\r\n" }
    if let signature = sent.signature { head += "\(ReportBatch.signatureHeader): \(signature)\r\n" }
    head += "Content-Length: \(sent.bytes.count)\r\n\r\n"
    return Array(head.utf8) + sent.bytes
}

guard base.host == "127.0.0.1", let port = base.port.flatMap({ UInt16(exactly: $0) }) else {
    FileHandle.standardError.write(Data("collector-bench: URL must be http://127.0.0.1:PORT/\n".utf8))
    exit(64)
}
let path = (base.path.hasSuffix("/") ? base.path : base.path + "/") + "v1/reports"
let requests = (0..<batches).map { request($0, host: "127.0.0.1:\(port)", path: path) }

struct Tally: Sendable {
    var next = 0
    var accepted = 0
    var duplicates = 0
    var statuses: [Int: Int] = [:]
    var firstError: String?
}
let tally = Mutex(Tally())

/// One device connection's loop: the next batch not yet taken, until none is left.
@Sendable func connection() {
    do {
        let client = try KeepAliveClient(port: port)
        while true {
            let k = tally.withLock { t -> Int in
                defer { t.next += 1 }
                return t.next
            }
            guard k < batches else { return }
            let answer = try client.exchange(requests[k])
            tally.withLock { t in
                t.statuses[answer.status, default: 0] += 1
                t.accepted += answer.accepted
                t.duplicates += answer.duplicates
                if answer.status != 200, t.firstError == nil { t.firstError = "\(answer.status) \(answer.body)" }
            }
        }
    } catch {
        tally.withLock { t in
            t.statuses[0, default: 0] += 1
            if t.firstError == nil { t.firstError = "\(error)" }
        }
    }
}

let finished = DispatchGroup()
let began = ContinuousClock.now
for _ in 0..<concurrency {
    finished.enter()
    Thread {
        connection()
        finished.leave()
    }.start()
}
finished.wait()
let elapsed = ContinuousClock.now - began
let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
let result = tally.withLock { $0 }
let statuses = result.statuses.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",")
print(
    "{\"reports\":\(total),\"batches\":\(batches),\"seconds\":\(String(format: "%.3f", seconds)),"
        + "\"reportsPerSecond\":\(Int(Double(total) / seconds)),\"accepted\":\(result.accepted),\"duplicates\":\(result.duplicates),"
        + "\"statuses\":{\(statuses)}}")
if let error = result.firstError {
    FileHandle.standardError.write(Data("collector-bench: not every batch was answered 200; first: \(error)\n".utf8))
    exit(1)
}

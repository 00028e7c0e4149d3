import CZstd
import DeviceIdentity
import DeviceTargeting
import FleetCollector
import FleetReports
import Foundation
import TestSupport

/// Batches, compression and a look into the database, for the collector's tests.
enum CollectorFixtures {
    static let app = "com.example.notes"
    static let channel = "stable"

    /// A device id: 32 lowercase hex digits ending in `n`.
    static func device(_ n: Int) -> String { String(format: "%032x", n) }

    /// The id of device `n` as a batch carries it.
    static func deviceID(_ n: Int) -> DeviceID {
        guard let id = DeviceID(device(n)) else { preconditionFailure("\(device(n)) is not a device id") }
        return id
    }

    /// A report of `type` at `seconds` since 1970.
    static func report(
        _ seq: Int64, _ type: ReportKind, at seconds: Double, running: String, version: String? = nil, reason: ReportReason? = nil,
        ms: Int64? = nil, rollout: RolloutSeen? = nil
    ) -> FleetReport {
        var r = FleetReport(seq: seq, time: Date(timeIntervalSince1970: seconds), type: type, running: running)
        r.version = version
        r.reason = reason
        r.ms = ms
        r.rollout = rollout
        return r
    }

    static func batch(device: Int, _ reports: [FleetReport], channel: String = channel) -> ReportBatch {
        ReportBatch(device: Self.deviceID(device), app: app, channel: channel, reports: reports)
    }

    /// `batch` carrying `labels`, as a device whose config has them sends it.
    static func labelled(_ batch: ReportBatch, _ labels: [String: String]) throws -> ReportBatch {
        var b = batch
        b.labels = try DeviceLabels(labels)
        return b
    }

    /// `count` heartbeats of one device, seq `from`….
    static func heartbeats(device: Int, from: Int64 = 1, count: Int = 1) -> ReportBatch {
        batch(device: device, (0..<Int64(count)).map { report(from + $0, .heartbeat, at: 1_764_090_000 + Double($0), running: "1.0.0") })
    }

    /// `data` as one zstd frame (libzstd, level 3).
    static func zstd(_ data: Data) -> Data {
        let bound = ZSTD_compressBound(data.count)
        var out = [UInt8](repeating: 0, count: bound)
        let n = data.withUnsafeBytes { src in out.withUnsafeMutableBytes { ZSTD_compress($0.baseAddress, bound, src.baseAddress, data.count, 3) } }
        return Data(out.prefix(ZSTD_isError(n) != 0 ? 0 : n))
    }

    /// The number of reports stored in the SQLite file at `path`.
    static func storedReports(_ path: String) async throws -> Int {
        let store = try SQLiteReportStore(path: path)
        defer { Task { await store.close() } }
        return Int(try await store.query("SELECT COUNT(*) FROM reports", []).first?.first?.integer ?? -1)
    }

    /// Rows of a query on the SQLite file at `path`, each row's columns joined by `|`.
    static func rows(_ path: String, _ sql: String) async throws -> [String] {
        let store = try SQLiteReportStore(path: path)
        defer { Task { await store.close() } }
        return try await store.query(sql, []).map { row in
            row.map { value in value.text ?? value.integer.map(String.init) ?? "NULL" }.joined(separator: "|")
        }
    }

    /// `{"error": "…"}`'s message.
    static func error(_ response: CurlResponse) -> String? {
        (try? JSONSerialization.jsonObject(with: response.data) as? [String: String])?["error"]
    }
}

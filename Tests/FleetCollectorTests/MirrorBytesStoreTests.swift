import FleetCollector
import FleetReports
import Foundation
import TestSupport
import Testing

/// A `downloaded` report's `mirrorBytes` (docs/site-mirror.md#devices): read from a batch
/// and stored beside `bytes`, held reports included; a report without it stores NULL.
@Suite struct MirrorBytesStoreTests {
    typealias F = CollectorFixtures

    @Test func mirrorBytesTravelFromTheBatchToTheStore() async throws {
        let dir = try TemporaryDirectory("mirror-bytes")
        let store = try SQLiteReportStore(path: dir("reports.db"))
        try await store.prepare()
        var viaMirror = F.report(1, .downloaded, at: 1_764_090_001, running: "1.0.0", version: "1.1.0", ms: 420)
        viaMirror.via = .archive
        viaMirror.bytes = 3_101_877
        viaMirror.mirrorBytes = 3_000_000
        var direct = F.report(2, .downloaded, at: 1_764_090_002, running: "1.1.0", version: "1.2.0", ms: 300)
        direct.bytes = 51_234
        let batch = F.batch(device: 3, [viaMirror, direct])
        // Through the wire format, as a collector reads it.
        let decoded = try ReportBatch.decode(batch.encoded())
        #expect(decoded.reports.map(\.mirrorBytes) == [3_000_000, nil])
        _ = try await store.insert(decoded, received: Date(timeIntervalSince1970: 1_764_090_100))
        await store.close()
        let rows = try await F.rows(dir("reports.db"), "SELECT seq, bytes, mirror_bytes FROM reports ORDER BY seq")
        #expect(rows == ["1|3101877|3000000", "2|51234|NULL"])
        #expect(try await F.rows(dir("reports.db"), "SELECT MAX(version) FROM collector_schema") == ["5"])
    }

    @Test(arguments: ["-1", "9007199254740992", "\"12\"", "1.5"])
    func mirrorBytesOffTheBoundsRefuseTheBatch(value: String) throws {
        var report = F.report(1, .downloaded, at: 1_764_090_001, running: "1.0.0", version: "1.1.0")
        report.mirrorBytes = 5
        let text = String(decoding: F.batch(device: 1, [report]).encoded(), as: UTF8.self)
        #expect(text.contains("\"mirrorBytes\":5"))
        let bad = text.replacingOccurrences(of: "\"mirrorBytes\":5", with: "\"mirrorBytes\":\(value)")
        #expect(throws: FleetReportsError.self) { try ReportBatch.decode(Array(bad.utf8)) }
    }
}

import FleetCollector
import FleetReports
import Foundation
import TestSupport
import Testing

/// A `download-deferred` report (docs/download-policy.md#reports) travels from the batch to
/// the store with its reason; a reason of another kind is refused with the batch.
@Suite struct DownloadDeferredStoreTests {
    typealias F = CollectorFixtures

    @Test func aDownloadDeferredReportIsAcceptedWithEachReason() async throws {
        let dir = try TemporaryDirectory("download-deferred")
        let store = try SQLiteReportStore(path: dir("reports.db"))
        try await store.prepare()
        let reasons: [ReportReason] = [.window, .metered, .held]
        let reports = reasons.enumerated().map { i, reason in
            var r = F.report(Int64(i + 1), .downloadDeferred, at: 1_764_090_001 + Double(i), running: "1.0.0", version: "1.1.0", reason: reason)
            r.detail = "download deferred: outside the download windows (01:00–05:00 UTC); may download from 2025-11-26T01:00:00Z"
            return r
        }
        let text = String(decoding: F.batch(device: 4, reports).encoded(), as: UTF8.self)
        #expect(text.contains("\"type\":\"download-deferred\"") && text.contains("\"reason\":\"metered\""))
        let decoded = try ReportBatch.decode(Array(text.utf8))
        #expect(decoded.reports.map(\.type) == [.downloadDeferred, .downloadDeferred, .downloadDeferred])
        #expect(decoded.reports.map(\.reason) == reasons)
        _ = try await store.insert(decoded, received: Date(timeIntervalSince1970: 1_764_090_100))
        await store.close()
        let rows = try await F.rows(dir("reports.db"), "SELECT seq, type, reason FROM reports ORDER BY seq")
        #expect(rows == ["1|download-deferred|window", "2|download-deferred|metered", "3|download-deferred|held"])

        let bad = text.replacingOccurrences(of: "\"reason\":\"metered\"", with: "\"reason\":\"cellular\"")
        #expect(throws: FleetReportsError.self) { try ReportBatch.decode(Array(bad.utf8)) }
    }
}

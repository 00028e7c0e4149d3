import FleetCollector
import FleetReports
import Foundation
import TestSupport
import Testing

/// The SQLite store's insert, which binds each report's columns itself (issue 68): every
/// column lands where it belongs, and a batch that is partly a replay stores the new reports
/// only, names them, and moves the device's row by them alone.
@Suite struct SQLiteIngestTests {
    typealias F = CollectorFixtures

    @Test func everyColumnLandsInItsPlaceAndAReplayStoresOnlyWhatIsNew() async throws {
        let dir = try TemporaryDirectory("sqlite-ingest")
        let store = try SQLiteReportStore(path: dir("reports.db"))
        try await store.prepare()
        var downloaded = F.report(2, .downloaded, at: 1_764_090_002, running: "1.0.0", version: "1.1.0", ms: 420)
        downloaded.via = .patch
        downloaded.bytes = 123_456
        let first = F.batch(
            device: 7,
            [
                F.report(1, .updateFound, at: 1_764_090_001, running: "1.0.0", version: "1.1.0", rollout: RolloutSeen(percent: 25, paused: true)),
                downloaded,
            ])
        let received = Date(timeIntervalSince1970: 1_764_090_100)
        let stored = try await store.insert(first, received: received)
        #expect(stored == IngestResult(accepted: 2, duplicates: 0, storedSeqs: [1, 2]))

        // Seq 2 again (a replay), seq 3 new and the device's latest.
        let again = F.batch(
            device: 7,
            [downloaded, F.report(3, .rolledBack, at: 1_764_090_003, running: "1.0.0", version: "1.1.0", reason: .timedOut)])
        let second = try await store.insert(again, received: received.addingTimeInterval(60))
        #expect(second == IngestResult(accepted: 1, duplicates: 1, storedSeqs: [3]))
        await store.close()

        let rows = try await F.rows(
            dir("reports.db"),
            "SELECT device, stream, seq, app, channel, time_ms, received_ms, type, running, shell, version, from_version, reason, "
                + "detail, via, bytes, ms, count, rollout_percent, rollout_paused FROM reports ORDER BY seq")
        let device = F.device(7)
        #expect(
            rows == [
                "\(device)||1|\(F.app)|\(F.channel)|1764090001000|1764090100000|update-found|1.0.0|NULL|1.1.0|NULL|NULL|NULL|NULL|NULL|NULL|NULL|25|1",
                "\(device)||2|\(F.app)|\(F.channel)|1764090002000|1764090100000|downloaded|1.0.0|NULL|1.1.0|NULL|NULL|NULL|patch|123456|420|NULL|NULL|NULL",
                "\(device)||3|\(F.app)|\(F.channel)|1764090003000|1764090160000|rolled-back|1.0.0|NULL|1.1.0|NULL|timed-out|NULL|NULL|NULL|NULL|NULL|NULL|NULL",
            ])
        #expect(
            try await F.rows(dir("reports.db"), "SELECT device, last_ms, running, first_ms, received_ms FROM devices")
                == ["\(device)|1764090003000|1.0.0|1764090100000|1764090160000"])
    }
}

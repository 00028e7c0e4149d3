import FleetCollector
import FleetReports
import Foundation
import Synchronization
import TestSupport
import Testing

/// Reports older than the retention leave the store; the clock is injected.
@Suite struct PruneTests {
    typealias F = CollectorFixtures

    final class WallClock: Sendable {
        private let value: Mutex<Date>
        init(_ date: Date) { value = Mutex(date) }
        func now() -> Date { value.withLock { $0 } }
        func advance(days: Double) { value.withLock { $0 = $0.addingTimeInterval(days * 86_400) } }
    }

    @Test func reportsOlderThanTheRetentionArePrunedHourly() async throws {
        let dir = try TemporaryDirectory("collect")
        let store = try SQLiteReportStore(path: dir("reports.db"))
        try await store.prepare()
        let clock = WallClock(Date(timeIntervalSince1970: 1_764_090_000))
        let collector = Collector(
            configuration: CollectorConfiguration(port: 0, readToken: try ReadToken("abcdefghijklmnopqrstuvwxyz"), retentionDays: 30),
            store: store, now: { clock.now() })
        _ = try await store.insert(F.heartbeats(device: 1, count: 2), received: clock.now())
        clock.advance(days: 20)
        _ = try await store.insert(F.heartbeats(device: 2, count: 3), received: clock.now())
        var schedule = PruneSchedule(retentionDays: 30)
        await collector.pruneIfDue(&schedule)
        #expect(try await F.storedReports(dir("reports.db")) == 5)
        clock.advance(days: 11)
        // Not due yet: the last pruning was less than an hour ago (by the schedule's clock).
        #expect(schedule.due(at: clock.now().addingTimeInterval(-11 * 86_400)) == nil)
        await collector.pruneIfDue(&schedule)
        #expect(try await F.storedReports(dir("reports.db")) == 3)
        let summary = try await store.summary(app: F.app, channel: F.channel, windowSeconds: 86_400, now: clock.now())
        #expect(summary.devices == 1)
        await store.close()
    }
}

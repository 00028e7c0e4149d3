import FleetReports
import Foundation
import TestSupport
import Testing

@testable import FleetCollector

/// `GET /v1/problems`'s queries read the partial index of problem reports alone: SQLite's
/// plan of each, on a real database, searches `reports_problems` as a covering index (one
/// range of one app and channel's problem reports by time), never the table.
@Suite struct ProblemsPlanTests {
    @Test func everyQueryReadsOneRangeOfTheCoveringIndex() async throws {
        let dir = try TemporaryDirectory("problems-plan")
        let store = try SQLiteReportStore(path: dir("reports.db"))
        try await store.prepare()
        // Reports of two channels, problems and not, so the planner has rows to weigh.
        var reports: [FleetReport] = []
        for seq in 1...200 {
            let type: ReportKind = [.heartbeat, .rolledBack, .pageErrors, .webProcessDied][seq % 4]
            var r = CollectorFixtures.report(Int64(seq), type, at: 1_764_090_000 + Double(seq), running: "1.0.0", version: "1.1.0")
            r.reason = type == .rolledBack ? .timedOut : type == .webProcessDied ? .crashed : nil
            r.count = type == .pageErrors ? 1 : nil
            reports.append(r)
        }
        for channel in ["stable", "beta"] {
            _ = try await store.insert(CollectorFixtures.batch(device: channel.count, reports, channel: channel), received: Date())
        }
        let key: [SQLValue] = [.text(CollectorFixtures.app), .text("stable"), .integer(0)]
        let queries: [(String, [SQLValue])] = [
            (ProblemSummaryQuery.candidates, key + [.integer(201)]),
            (ProblemSummaryQuery.kinds(2), key + [.text("1.1.0"), .text("1.0.0")]),
            (ProblemSummaryQuery.details(1), key + [.text("1.1.0"), .integer(100)]),
        ]
        for (sql, arguments) in queries {
            let plan = try await store.query("EXPLAIN QUERY PLAN " + sql, arguments).compactMap { $0.last?.text }
            let reads = plan.filter { $0.contains("reports") && !$0.contains("CO-ROUTINE") }
            #expect(reads == ["SEARCH reports USING COVERING INDEX reports_problems (app=? AND channel=? AND time_ms>?)"], "\(plan)")
        }
        // The route's answer from the same store: the rows above, counted once per report.
        let answer = try await store.problems(
            app: CollectorFixtures.app, channel: "stable", windowSeconds: 366 * 86_400, now: Date(timeIntervalSince1970: 1_764_100_000),
            versions: 5)
        #expect(answer.versions.map(\.version) == ["1.1.0", "1.0.0"])
        #expect(answer.versions.first?.problems.map(\.count) == [50, 50], "rollbacks and page errors of 1.1.0")
        await store.close()
    }
}

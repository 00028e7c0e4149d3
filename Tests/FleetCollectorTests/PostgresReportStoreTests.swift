import FleetCollector
import FleetReports
import Foundation
import TestSupport
import Testing

/// The PostgreSQL store on a real PostgreSQL server (Tests/TestSupport/Servers/TestPostgres.swift),
/// each test in a database of its own: it stores what the SQLite store stores and answers
/// the same summary; (device, seq) is stored once whichever connection brings it; a server
/// that goes away makes operations fail in bounded time, and the store works again when
/// the server is back.
@Suite struct PostgresReportStoreTests {
    /// A store on a new database of the shared server.
    func freshStore(_ label: String) async throws -> (PostgresReportStore, database: String, server: TestPostgres) {
        let server = try await TestPostgres.shared()
        let url = try await server.createDatabase(label)
        return (try Self.store(url), Self.databaseName(url), server)
    }

    /// `timeout`: each operation's deadline; 60 s by default, since a full suite on 2 cores
    /// once kept a schema's creation waiting past 10 s (a CI run); the restart test sets
    /// its own bound.
    static func store(_ url: String, timeout: Duration = .seconds(60)) throws -> PostgresReportStore {
        guard case .postgres(let components) = try DatabaseURL(url) else { throw HarnessError("\(url) is not a postgres URL") }
        return try PostgresReportStore(url: components, maximumConnections: 4, operationTimeout: timeout)
    }

    static func databaseName(_ url: String) -> String { String(url.split(separator: "/").last ?? "") }

    @Test func storesTheSameAndAnswersTheSameSummaryAsSQLite() async throws {
        let (postgres, _, _) = try await freshStore("summary")
        let folder = try TemporaryDirectory()
        let sqlite = try SQLiteReportStore(path: folder.path + "/reports.db")
        try await postgres.prepare()
        try await sqlite.prepare()
        let batches = SyntheticFleet.batches(devices: 60)
        let received = SyntheticFleet.start.addingTimeInterval(86_400)
        var stored = (postgres: IngestResult(accepted: 0, duplicates: 0), sqlite: IngestResult(accepted: 0, duplicates: 0))
        for batch in batches {
            let p = try await postgres.insert(batch, received: received)
            let s = try await sqlite.insert(batch, received: received)
            #expect(p == s)
            stored.postgres.accepted += p.accepted
            stored.sqlite.accepted += s.accepted
        }
        let total = batches.reduce(0) { $0 + $1.reports.count }
        #expect(stored.postgres.accepted == total)
        #expect(stored.sqlite.accepted == total)
        // Sent again (a device that missed the answer): every report is a duplicate.
        for batch in batches.prefix(10) {
            let again = try await postgres.insert(batch, received: received)
            #expect(again == IngestResult(accepted: 0, duplicates: batch.reports.count))
        }
        let now = SyntheticFleet.end(devices: 60)
        for window in [3_600, 86_400 * 30] {
            let p = try await postgres.summary(app: SyntheticFleet.app, channel: SyntheticFleet.channel, windowSeconds: window, now: now)
            let s = try await sqlite.summary(app: SyntheticFleet.app, channel: SyntheticFleet.channel, windowSeconds: window, now: now)
            #expect(p == s)
            #expect(p.devices == 60)
            let v = try #require(p.versions.first { $0.version == "1.1.0" })
            #expect(v.trials > 0 && v.commits > 0 && !v.rollbacks.isEmpty && !v.blacklists.isEmpty)
            #expect(v.trials == v.commits + v.rollbacks.values.reduce(0, +))
            #expect((v.staged ?? 0) > 0 && v.stagedToRunningMedianMs != nil && v.stagedToRunningP95Ms != nil, "\(v)")
            #expect(v.medianAckMs != nil)
            #expect(!p.rollouts.isEmpty && !p.timeline.isEmpty)
        }
        // Pruning removes the same from both.
        #expect(try await postgres.prune(before: received.addingTimeInterval(1)) == total)
        #expect(try await sqlite.prune(before: received.addingTimeInterval(1)) == total)
        let empty = try await postgres.summary(app: SyntheticFleet.app, channel: SyntheticFleet.channel, windowSeconds: 3_600, now: now)
        #expect(empty.devices == 0 && empty.versions.isEmpty)
        await postgres.close()
        await sqlite.close()
    }

    @Test func aReportIsStoredOnceWhicheverCollectorBringsIt() async throws {
        let (first, database, server) = try await freshStore("twice")
        let url = server.url(database: database)
        let second = try Self.store(url)
        // Both prepare at once, as two collectors starting together would.
        async let a: Void = first.prepare()
        async let b: Void = second.prepare()
        _ = try await (a, b)
        let batches = SyntheticFleet.batches(devices: 25, perBatch: 3)
        let received = Date()
        // Every batch to both at once: (device, seq) is the key, so each report lands once.
        let results = try await withThrowingTaskGroup(of: IngestResult.self) { group in
            for batch in batches {
                for store in [first, second] { group.addTask { try await store.insert(batch, received: received) } }
            }
            return try await group.reduce(into: [IngestResult]()) { $0.append($1) }
        }
        let total = batches.reduce(0) { $0 + $1.reports.count }
        #expect(results.reduce(0) { $0 + $1.accepted } == total)
        #expect(results.reduce(0) { $0 + $1.duplicates } == total)
        let rows = try await server.psql("SELECT COUNT(*), COUNT(DISTINCT (device, seq)) FROM reports", database: database)
        #expect(rows.trimmingCharacters(in: .whitespacesAndNewlines) == "\(total)|\(total)")
        await first.close()
        await second.close()
    }

    @Test func aServerThatGoesAwayFailsInBoundedTimeAndIsUsedAgainWhenBack() async throws {
        let server = try await TestPostgres.start()
        defer { server.remove() }
        let url = try await server.createDatabase("restart")
        // The schema is made with the default bound; the 8 s one is what the restart tests.
        let setup = try Self.store(url)
        try await setup.prepare()
        await setup.close()
        let store = try Self.store(url, timeout: .seconds(8))
        try await store.prepare()
        let batches = SyntheticFleet.batches(devices: 3)
        #expect(try await store.insert(batches[0], received: Date()).accepted == batches[0].reports.count)
        try await server.stop()
        let began = ContinuousClock.now
        await #expect(throws: FleetCollectorError.self) { try await store.insert(batches[1], received: Date()) }
        await #expect(throws: FleetCollectorError.self) {
            try await store.summary(app: SyntheticFleet.app, channel: SyntheticFleet.channel, windowSeconds: 60, now: Date())
        }
        // Bounded: two operations, each within its deadline (8 s), not a hang.
        #expect(ContinuousClock.now - began < .seconds(60))
        try await server.restart()
        // The pool connects again by itself: the same store stores the batch it refused.
        var accepted: Int?
        var failures: [String] = []
        do {
            try await Poll.until("the store to work again after the restart", timeout: 60, every: .milliseconds(200)) {
                do {
                    accepted = try await store.insert(batches[1], received: Date()).accepted
                } catch {
                    failures.append("\(ContinuousClock.now - began): \(error)")
                }
                return accepted != nil
            }
        } catch {
            Issue.record("\(error); the store's errors: \(failures.suffix(5))")
        }
        #expect(accepted == batches[1].reports.count)
        let rows = try await server.psql("SELECT COUNT(*) FROM reports", database: Self.databaseName(url))
        #expect(Int(rows.trimmingCharacters(in: .whitespacesAndNewlines)) == batches[0].reports.count + batches[1].reports.count)
        await store.close()
    }

    @Test func aURLItCannotUseIsRefusedNamingWhy() throws {
        for (url, why) in [
            ("postgres://127.0.0.1:5432/reports", "no user"),
            ("postgres://collector@127.0.0.1:5432/", "no database name"),
            ("postgres://collector@127.0.0.1:5432/reports?sslmode=verify-full", "unknown option sslmode=verify-full"),
        ] {
            guard case .postgres(let components) = try DatabaseURL(url) else {
                Issue.record("\(url) is not read as a postgres URL")
                continue
            }
            let error = #expect(throws: FleetCollectorError.self) { try PostgresReportStore(url: components) }
            #expect(error?.code == .badDatabaseURL)
            #expect("\(error.map { "\($0)" } ?? "")".contains(why))
        }
    }
}

import FleetCollector
import FleetReports
import Foundation
import TestSupport
import Testing

/// Real `clientctl collect` processes on a real PostgreSQL (Tests/TestSupport/Servers/TestPostgres.swift):
/// what they store and answer equals what a collector on SQLite does; two collectors on one
/// database store a report that reaches both once; a PostgreSQL that stops under a running
/// collector makes it answer 503 with Retry-After (nothing stored, nothing lost), and it
/// stores again once PostgreSQL is back.
@Suite struct CollectOnPostgresTests {
    static let summaryPath = "v1/fleet?app=\(SyntheticFleet.app)&channel=\(SyntheticFleet.channel)&window=86400"

    /// The summary a collector answers, its `generated` time set aside (each answer has its own).
    static func summary(_ collector: CollectProcess) async throws -> FleetSummary {
        let response = try await collector.read(summaryPath, token: collector.token)
        guard response.status == 200 else { throw HarnessError("GET /v1/fleet: \(response.status) \(response.body)") }
        var summary = try FleetSummary.decoder().decode(FleetSummary.self, from: response.data)
        summary.generated = Date(timeIntervalSince1970: 0)
        return summary
    }

    /// `{"accepted": N, "duplicates": M}` of a 200.
    static func counts(_ response: CurlResponse) throws -> IngestResult {
        guard response.status == 200 else { throw HarnessError("POST /v1/reports: \(response.status) \(response.body)") }
        return try JSONDecoder().decode(IngestResult.self, from: response.data)
    }

    @Test func twoCollectorsOnOneDatabaseStoreEachReportOnceAndAnswerAsSQLiteDoes() async throws {
        let server = try await TestPostgres.shared()
        let url = try await server.createDatabase("twocollectors")
        let dir = try TemporaryDirectory("collect-pg")
        // Every batch comes from 127.0.0.1 at once, as from a load balancer: the per-address
        // caps are raised as docs/fleet-reports.md says to behind one.
        let balanced = ["--connections-per-address", "1024", "--reads-per-address", "1024"]
        let first = try await CollectProcess(database: url, arguments: balanced, scratch: dir.path)
        let second = try await CollectProcess(database: url, arguments: balanced, scratch: dir.path)
        let sqlite = try await CollectProcess(database: "sqlite:" + dir("reports.db"), arguments: balanced, scratch: dir.path)
        let batches = SyntheticFleet.batches(devices: 24, perBatch: 3)
        let total = batches.reduce(0) { $0 + $1.reports.count }
        // Each batch to both PostgreSQL collectors at once (a device whose first attempt
        // timed out behind a load balancer and went to the other), and to the SQLite one.
        // Eight batches at a time (sixteen requests): within the collectors' 32 places in
        // flight however slowly this machine runs them, so a 503 here is a defect, not load.
        var answers: [IngestResult] = []
        for start in stride(from: 0, to: batches.count, by: 8) {
            answers += try await withThrowingTaskGroup(of: IngestResult.self) { group in
                for (i, batch) in batches.enumerated().dropFirst(start).prefix(8) {
                    let body = i % 2 == 0 ? CollectorFixtures.zstd(batch.encoded()) : batch.encoded()
                    let encoding = i % 2 == 0 ? "zstd" : nil
                    for collector in [first, second] {
                        group.addTask { try Self.counts(try await collector.post(body, encoding: encoding)) }
                    }
                }
                return try await group.reduce(into: [IngestResult]()) { $0.append($1) }
            }
        }
        #expect(answers.reduce(0) { $0 + $1.accepted } == total)
        #expect(answers.reduce(0) { $0 + $1.duplicates } == total)
        for batch in batches { #expect(try Self.counts(try await sqlite.post(batch.encoded())).accepted == batch.reports.count) }
        // PostgreSQL's own count: every (device, seq) once.
        let database = String(url.split(separator: "/").last ?? "")
        let rows = try await server.psql("SELECT COUNT(*), COUNT(DISTINCT (device, seq)) FROM reports", database: database)
        #expect(rows.trimmingCharacters(in: .whitespacesAndNewlines) == "\(total)|\(total)")
        // Either collector answers the same summary, and it is the SQLite collector's.
        let fromFirst = try await Self.summary(first)
        #expect(fromFirst.devices == 24)
        #expect(fromFirst.versions.contains { $0.version == "1.1.0" && $0.trials > 0 && !$0.rollbacks.isEmpty })
        #expect(try await Self.summary(second) == fromFirst)
        #expect(try await Self.summary(sqlite) == fromFirst)
        #expect(first.stop() == 0)
        #expect(second.stop() == 0)
        #expect(sqlite.stop() == 0)
    }

    @Test func aStoppedPostgreSQLGets503WithRetryAfterAndTheCollectorRecovers() async throws {
        let server = try await TestPostgres.start()
        defer { server.remove() }
        let url = try await server.createDatabase("restart")
        let dir = try TemporaryDirectory("collect-pg")
        let collector = try await CollectProcess(database: url, scratch: dir.path)
        let batches = SyntheticFleet.batches(devices: 2, perBatch: 5)
        #expect(try Self.counts(try await collector.post(batches[0].encoded())).accepted == batches[0].reports.count)
        try await server.stop()
        let refused = try await collector.post(batches[1].encoded())
        #expect(refused.status == 503, "\(refused.body)")
        #expect(refused["retry-after"].flatMap { Int($0) }.map { $0 > 0 } == true, "\(refused.headers)")
        #expect(CollectorFixtures.error(refused)?.contains("unavailable") == true, "\(refused.body)")
        // Reads fail too, and the process stays up.
        #expect(try await collector.read(Self.summaryPath, token: collector.token).status == 503)
        #expect(collector.process.isRunning)
        try await server.restart()
        // The device sends the refused batch again: once PostgreSQL is back it is stored,
        // without restarting the collector.
        var stored: IngestResult?
        try await Poll.until("the collector to store again after PostgreSQL restarted", timeout: 90, every: .milliseconds(500)) {
            let response = try await collector.post(batches[1].encoded())
            if response.status == 200 { stored = try Self.counts(response) }
            return stored != nil
        }
        #expect(stored?.accepted == batches[1].reports.count)
        let rows = try await server.psql("SELECT COUNT(*) FROM reports", database: String(url.split(separator: "/").last ?? ""))
        #expect(Int(rows.trimmingCharacters(in: .whitespacesAndNewlines)) == batches[0].reports.count + batches[1].reports.count)
        #expect(collector.stop() == 0)
    }

    /// Device keys and manual admission on PostgreSQL, with the SQL SQLite runs: a key binds
    /// its id, another key is refused, a pending device's reports are held until an admin
    /// request admits it, then they count; and a database of schema 1 is brought forward.
    @Test func keysAndAdmissionWorkOnPostgreSQLAsOnSQLite() async throws {
        let server = try await TestPostgres.shared()
        let url = try await server.createDatabase("admission")
        let database = String(url.split(separator: "/").last ?? "")
        let base = Int64(Date().timeIntervalSince1970 * 1000) - 60_000
        // A collector of schema 1 wrote this database.
        _ = try await server.psql(
            """
            CREATE TABLE collector_schema (version INTEGER NOT NULL); INSERT INTO collector_schema VALUES (1);
            CREATE TABLE reports (device TEXT NOT NULL, seq BIGINT NOT NULL, app TEXT NOT NULL, channel TEXT NOT NULL,
              time_ms BIGINT NOT NULL, received_ms BIGINT NOT NULL, type TEXT NOT NULL, running TEXT NOT NULL,
              shell TEXT, version TEXT, from_version TEXT, reason TEXT, detail TEXT, via TEXT, bytes BIGINT, ms BIGINT,
              count BIGINT, rollout_percent INTEGER, rollout_paused INTEGER, PRIMARY KEY (device, seq));
            CREATE INDEX reports_by_channel ON reports (app, channel, time_ms);
            CREATE INDEX reports_by_received ON reports (received_ms);
            CREATE TABLE devices (app TEXT NOT NULL, channel TEXT NOT NULL, device TEXT NOT NULL, last_ms BIGINT NOT NULL,
              running TEXT NOT NULL, received_ms BIGINT NOT NULL, PRIMARY KEY (app, channel, device));
            CREATE INDEX devices_by_received ON devices (received_ms);
            INSERT INTO reports (device, seq, app, channel, time_ms, received_ms, type, running)
              VALUES ('\(CollectorFixtures.device(9))', 1, '\(CollectorFixtures.app)', '\(CollectorFixtures.channel)', \(base), \(base + 500), 'heartbeat', '1.0.0');
            INSERT INTO devices VALUES ('\(CollectorFixtures.app)', '\(CollectorFixtures.channel)', '\(CollectorFixtures.device(9))', \(base), '1.0.0', \(base + 500));
            """, database: database)
        let dir = try TemporaryDirectory("collect-pg")
        try Data("admin-token-0123456789abcdef\n".utf8).write(to: URL(fileURLWithPath: dir("admin.token")))
        chmod(dir("admin.token"), 0o600)
        let collector = try await CollectProcess(
            database: url, arguments: ["--admission", "manual", "--admin-token-file", dir("admin.token")], scratch: dir.path)
        let migrated = try await server.psql(
            "SELECT MAX(version), (SELECT COUNT(*) FROM reports), (SELECT first_ms FROM devices), (SELECT '[' || labels || ']' FROM devices) "
                + "FROM collector_schema", database: database)
        #expect(migrated.trimmingCharacters(in: .whitespacesAndNewlines) == "5|1|\(base + 500)|[]", "\(migrated)")

        let device = try DeviceSigner()
        let batch = try device.signed(CollectorFixtures.heartbeats(device: 1, count: 3))
        let held = try await collector.post(batch.body, headers: batch.headers)
        #expect(held.status == 200 && held.body.contains("\"held\":true"), "\(held.body)")
        let forged = try DeviceSigner().signed(CollectorFixtures.heartbeats(device: 1, from: 4, count: 1))
        #expect(try await collector.post(forged.body, headers: forged.headers).status == 409)
        #expect(try await Self.summary(collector).devices == 1, "only the device of schema 1 counts")

        let admit = try await Curl.request(
            collector.baseURL + "v1/devices/admit", method: "POST",
            headers: ["Authorization: Bearer admin-token-0123456789abcdef", "Content-Type: application/json"],
            body: Data("{\"devices\":[\"\(device.publicKey)\"]}".utf8))
        #expect(admit.status == 200 && admit.body == "{\"devices\":1,\"named\":1,\"reports\":3}\n", "\(admit.body)")
        #expect(try await Self.summary(collector).devices == 2)
        let counts = try await server.psql("SELECT (SELECT COUNT(*) FROM reports), (SELECT COUNT(*) FROM held_reports)", database: database)
        #expect(counts.trimmingCharacters(in: .whitespacesAndNewlines) == "4|0", "\(counts)")
        #expect(collector.stop() == 0)
    }

    /// One key, one device, with two collectors on one database: the same stolen key signs
    /// batches for two new ids, one to each collector at the same moment, 20 times over.
    /// Each collector reads "no other id for this key" before the other commits; the unique
    /// index (`device_keys_one_device`) lets one bind and the other find its bind undone, so
    /// every key ends bound to exactly one id and the other id is refused 409, not stored.
    @Test func twoCollectorsNeverBindOneKeyToTwoIds() async throws {
        let server = try await TestPostgres.shared()
        let url = try await server.createDatabase("onekey")
        let database = String(url.split(separator: "/").last ?? "")
        let dir = try TemporaryDirectory("collect-pg")
        let balanced = ["--connections-per-address", "1024", "--reads-per-address", "1024", "--rate-per-address", "100000"]
        let first = try await CollectProcess(database: url, arguments: balanced, scratch: dir.path)
        let second = try await CollectProcess(database: url, arguments: balanced, scratch: dir.path)
        var statuses: [Int] = []
        for round in 0..<20 {
            let stolen = try DeviceSigner()
            let a = try stolen.signed(CollectorFixtures.heartbeats(device: 1_000 + 2 * round, count: 1))
            let b = try stolen.signed(CollectorFixtures.heartbeats(device: 1_001 + 2 * round, count: 1))
            let pair = try await withThrowingTaskGroup(of: Int.self) { group in
                group.addTask { try await first.post(a.body, headers: a.headers).status }
                group.addTask { try await second.post(b.body, headers: b.headers).status }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(pair.sorted() == [200, 409], "round \(round): one id binds the key, the other is refused: \(pair)")
            statuses += pair
        }
        let bound = try await server.psql(
            "SELECT COUNT(*), COUNT(DISTINCT key), (SELECT COUNT(DISTINCT device) FROM reports) FROM device_keys", database: database)
        let accepted = statuses.filter { $0 == 200 }.count
        #expect(bound.trimmingCharacters(in: .whitespacesAndNewlines) == "\(accepted)|\(accepted)|\(accepted)", "\(bound)")
        #expect(first.stop() == 0)
        #expect(second.stop() == 0)
    }

    /// A database of schema 2 in which one key signed for three ids (the attack before one
    /// key was one device) is brought forward at start: the first id keeps the key, the
    /// later two are rejected, their held reports deleted, and the one-device index made.
    @Test func aSchemaTwoDatabaseWithAKeyOfSeveralIdsKeepsTheFirst() async throws {
        let server = try await TestPostgres.shared()
        let url = try await server.createDatabase("schematwo")
        let database = String(url.split(separator: "/").last ?? "")
        let dir = try TemporaryDirectory("collect-pg")
        // The schema a collector of schema 2 made, written by one now and set back to 2
        // (without what schemas 3, 4 and 5 added).
        let maker = try await CollectProcess(database: url, scratch: dir.path)
        #expect(maker.stop() == 0)
        let base = Int64(Date().timeIntervalSince1970 * 1000) - 60_000
        let key = String(repeating: "ab", count: 32)
        _ = try await server.psql(
            """
            DROP INDEX device_keys_one_device; DROP TABLE rejected_keys; UPDATE collector_schema SET version = 2;
            ALTER TABLE devices DROP COLUMN labels; DROP TABLE device_labels;
            ALTER TABLE reports DROP COLUMN mirror_bytes; ALTER TABLE held_reports DROP COLUMN mirror_bytes;
            INSERT INTO device_keys (device, key, status, app, channel, first_ms, last_ms, held) VALUES
              ('\(CollectorFixtures.device(1))', '\(key)', 'accepted', 'a', 'stable', \(base), \(base), 0),
              ('\(CollectorFixtures.device(2))', '\(key)', 'accepted', 'a', 'stable', \(base + 10), \(base + 10), 0),
              ('\(CollectorFixtures.device(3))', '\(key)', 'pending', 'a', 'stable', \(base + 20), \(base + 20), 1);
            INSERT INTO held_reports (device, stream, seq, app, channel, time_ms, received_ms, type, running)
              VALUES ('\(CollectorFixtures.device(3))', '', 1, 'a', 'stable', \(base), \(base + 20), 'heartbeat', '1.0.0');
            """, database: database)
        let collector = try await CollectProcess(database: url, scratch: dir.path)
        let rows = try await server.psql(
            "SELECT string_agg(device || ':' || status, ',' ORDER BY device), (SELECT COUNT(*) FROM held_reports), "
                + "(SELECT MAX(version) FROM collector_schema), (SELECT COUNT(*) FROM pg_indexes WHERE indexname = 'device_keys_one_device') "
                + "FROM device_keys", database: database)
        let expected =
            "\(CollectorFixtures.device(1)):accepted,\(CollectorFixtures.device(2)):rejected,\(CollectorFixtures.device(3)):rejected|0|5|1"
        #expect(rows.trimmingCharacters(in: .whitespacesAndNewlines) == expected, "\(rows)")
        #expect(collector.stop() == 0)
    }
}

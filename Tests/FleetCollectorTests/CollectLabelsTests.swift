import FleetCollector
import FleetReports
import Foundation
import TestSupport
import Testing

/// Device labels at a real `clientctl collect` (docs/fleet-reports.md#one-cohorts-figures):
/// each device keeps the labels of its latest stored batch, the summary, the page and the
/// device list count one cohort with `label=KEY=VALUE`, a bad filter is a 400 naming why;
/// PostgreSQL answers as SQLite does; and a database of schema 3 of either store is brought
/// forward keeping every row, its devices without labels until their next batch.
@Suite struct CollectLabelsTests {
    typealias F = CollectorFixtures

    /// One device's trial of 1.1.0 from seq `seq`: installed, trial started, then committed
    /// or rolled back (timed out), a minute ago.
    static func trial(_ n: Int, from seq: Int64 = 1, rolledBack: Bool = false) -> ReportBatch {
        let at = Date().timeIntervalSince1970 - 60
        let end =
            rolledBack
            ? F.report(seq + 2, .rolledBack, at: at + 2, running: "1.0.0", version: "1.1.0", reason: .timedOut)
            : F.report(seq + 2, .committed, at: at + 2, running: "1.1.0", version: "1.1.0", ms: 500)
        return F.batch(
            device: n,
            [
                F.report(seq, .installed, at: at, running: "1.0.0", version: "1.1.0"),
                F.report(seq + 1, .trialStarted, at: at + 1, running: "1.1.0", version: "1.1.0"), end,
            ])
    }

    /// `?label=…&label=…`, each `KEY=VALUE` percent-encoded as `fleet status` sends it.
    static func query(_ labels: [String]) -> String {
        let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        return labels.map { "&label=" + ($0.addingPercentEncoding(withAllowedCharacters: unreserved) ?? "") }.joined()
    }

    /// The summary of one cohort (`labels` empty: every device), its `generated` time set aside.
    static func summary(_ collector: CollectProcess, _ labels: [String] = []) async throws -> FleetSummary {
        let response = try await collector.read("v1/fleet?app=\(F.app)&channel=\(F.channel)&window=86400" + query(labels), token: collector.token)
        guard response.status == 200 else { throw HarnessError("GET /v1/fleet \(labels): \(response.status) \(response.body)") }
        var summary = try FleetSummary.decoder().decode(FleetSummary.self, from: response.data)
        summary.generated = Date(timeIntervalSince1970: 0)
        return summary
    }

    /// The device list of one cohort.
    static func devices(_ collector: CollectProcess, _ labels: [String] = []) async throws -> DeviceList {
        let response = try await collector.read("v1/devices?limit=100" + query(labels), token: collector.token)
        guard response.status == 200 else { throw HarnessError("GET /v1/devices \(labels): \(response.status) \(response.body)") }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(DeviceList.self, from: response.data)
    }

    /// Posts a signed batch and expects it stored (`accepted` new reports).
    static func post(_ collector: CollectProcess, _ signed: (body: Data, headers: [String]), accepted: Int) async throws {
        let answer = try await collector.post(signed.body, headers: signed.headers)
        #expect(answer.status == 200 && answer.body.hasPrefix("{\"accepted\":\(accepted),"), "\(answer.body)")
    }

    /// Five devices: 1 `store=12 ring=beta` commits, 2 `store=12 ring=prod` rolls back,
    /// 3 `store=13 site=a_b` commits, 4 has no labels and commits, 5 `site=axb` commits.
    /// Returns their keys and the first batch of device 2 as sent.
    static func feed(_ collector: CollectProcess) async throws -> (keys: [DeviceSigner], second: (body: Data, headers: [String])) {
        let keys = try (1...5).map { _ in try DeviceSigner() }
        let labels: [[String: String]] = [
            ["store": "12", "ring": "beta"], ["store": "12", "ring": "prod"], ["store": "13", "site": "a_b"], [:], ["site": "axb"],
        ]
        var second: (body: Data, headers: [String])?
        for (i, key) in keys.enumerated() {
            let signed = try key.signed(try F.labelled(trial(i + 1, rolledBack: i == 1), labels[i]))
            try await post(collector, signed, accepted: 3)
            if i == 1 { second = signed }
        }
        return (keys, try #require(second))
    }

    /// What ``feed(_:)``'s fleet shows per cohort, then as devices change their labels.
    static func checkCohorts(_ collector: CollectProcess, _ fed: (keys: [DeviceSigner], second: (body: Data, headers: [String]))) async throws {
        let all = try await summary(collector)
        #expect(all.devices == 5 && all.labels == nil && all.versions.first { $0.version == "1.1.0" }?.trials == 5, "\(all)")

        let store12 = try await summary(collector, ["store=12"])
        #expect(store12.labels == ["store": "12"])
        #expect(store12.devices == 2, "\(store12)")
        let v = try #require(store12.versions.first { $0.version == "1.1.0" })
        #expect(v.installs == 2 && v.trials == 2 && v.commits == 1 && v.rollbacks == ["timed-out": 1] && v.failureRate == 0.5, "\(v)")
        #expect(store12.versions.first { $0.version == "1.1.0" }?.devicesNow == 1, "device 1 runs 1.1.0, device 2 went back")
        #expect(store12.timeline.last?.devices.values.reduce(0, +) == 2, "the timeline counts the cohort: \(store12.timeline)")

        let beta = try await summary(collector, ["ring=beta", "store=12"])
        #expect(beta.devices == 1 && beta.versions.first { $0.version == "1.1.0" }.map { [$0.trials, $0.commits] } == [1, 1], "\(beta)")
        // Exact text, byte for byte: no prefix of a value, no other case, no wildcard.
        #expect(try await summary(collector, ["site=a_b"]).devices == 1, "`_` is no wildcard: site=axb is another cohort")
        for none in [["store=1"], ["ring=Beta"], ["store=12", "ring=other"], ["tore=12"]] {
            let empty = try await summary(collector, none)
            #expect(empty.devices == 0 && empty.versions.isEmpty && empty.timeline.isEmpty, "\(none): \(empty)")
        }

        // Device 2 now says store=13: its figures move with it. Its first batch sent again
        // (a replay: nothing stored) does not bring its old labels back.
        try await post(collector, try fed.keys[1].signed(try F.labelled(F.heartbeats(device: 2, from: 4, count: 1), ["store": "13"])), accepted: 1)
        let replay = try await collector.post(fed.second.body, headers: fed.second.headers)
        #expect(replay.body == "{\"accepted\":0,\"duplicates\":3}\n", "\(replay.body)")
        #expect(try await summary(collector, ["store=12"]).devices == 1)
        let store13 = try await summary(collector, ["store=13"])
        #expect(store13.devices == 2 && store13.versions.first { $0.version == "1.1.0" }?.rollbacks == ["timed-out": 1], "\(store13)")
        // Device 3's config lost its labels: its next batch carries none.
        try await post(collector, try fed.keys[2].signed(F.heartbeats(device: 3, from: 4, count: 1)), accepted: 1)
        #expect(try await summary(collector, ["store=13"]).devices == 1)
        #expect(try await summary(collector).devices == 5)

        // The device list shows each device's labels and filters alike.
        let listed = try await devices(collector)
        #expect(listed.labels == nil && listed.devices.count == 5)
        #expect(listed.devices.first { $0.device.text == F.device(1) }?.labels == ["store": "12", "ring": "beta"])
        #expect(listed.devices.first { $0.device.text == F.device(2) }?.labels == ["store": "13"])
        #expect(listed.devices.first { $0.device.text == F.device(3) }?.labels == [:])
        let cohort = try await devices(collector, ["store=13"])
        #expect(
            cohort.labels == ["store": "13"] && cohort.devices.map(\.device.text) == [F.device(2)] && cohort.counts == ["accepted": 1], "\(cohort)")
    }

    @Test func eachDeviceKeepsItsLatestLabelsAndTheSummaryCountsOneCohort() async throws {
        let dir = try TemporaryDirectory("collect-labels")
        let collector = try await CollectProcess(database: "sqlite:" + dir("reports.db"), scratch: dir.path)
        let fed = try await Self.feed(collector)
        try await Self.checkCohorts(collector, fed)
        // As stored: canonical JSON, keys in byte order, the empty string for none.
        let rows = try await F.rows(dir("reports.db"), "SELECT device, '[' || labels || ']' FROM devices ORDER BY device")
        #expect(
            rows == [
                "\(F.device(1))|[{\"ring\":\"beta\",\"store\":\"12\"}]", "\(F.device(2))|[{\"store\":\"13\"}]", "\(F.device(3))|[]",
                "\(F.device(4))|[]", "\(F.device(5))|[{\"site\":\"axb\"}]",
            ], "\(rows)")
        // The page counts the cohort and says whose figures they are.
        let basic = Data("anyone:\(collector.token)".utf8).base64EncodedString()
        let page = try await Curl.request(
            collector.baseURL + "?app=\(F.app)&channel=\(F.channel)&label=store=12", headers: ["Authorization: Basic \(basic)"])
        #expect(page.status == 200 && page.body.contains("data-field=\"labels\">· store=12<"), "\(page.status)")
        #expect(page.body.contains("<span data-field=\"devices\">1</span>"), "device 1 alone is store=12 now")
        #expect(collector.stop() == 0)
    }

    /// A filter the collector cannot use is a 400 whose one line says why, on every route that
    /// takes one; a filter unencoded (`label=store=12`) reads as encoded.
    @Test func aBadFilterIsA400NamingWhy() async throws {
        let dir = try TemporaryDirectory("collect-labels")
        let collector = try await CollectProcess(database: "sqlite:" + dir("reports.db"), scratch: dir.path)
        let fed = try DeviceSigner()
        try await Self.post(collector, try fed.signed(try F.labelled(Self.trial(1), ["store": "12"])), accepted: 3)
        let fleet = "v1/fleet?app=\(F.app)&channel=\(F.channel)"
        #expect(try await collector.read(fleet + "&label=store=12", token: collector.token).body.contains("\"devices\":1,"))
        let nine = (1...9).map { "&label=k\($0)=v" }.joined()
        for (query, why) in [
            ("&label=Store=12", "label 'Store=12': the key must start with a lowercase letter (?label=KEY=VALUE&label=…)"),
            ("&label=store", "label 'store': not KEY=VALUE"),
            ("&label=store=", "label 'store=': the value is empty"),
            ("&label=id=7", "label 'id=7': the key is reserved by the target language"),
            ("&label=store=1%202", "label 'store=1 2': the value has the character ' '"),
            ("&label=store=%1B%5B2J", "label 'store=\\u{1b}[2J': the value has the character '\\u{1b}'"),
            ("&label=store=12&label=store=13", "label 'store=13': the key 'store' is given twice"),
            (nine, "label: 9 labels, at most 8"),
        ] {
            for path in [fleet, "v1/devices?limit=5"] {
                let answer = try await collector.read(path + query, token: collector.token)
                #expect(answer.status == 400 && F.error(answer)?.hasPrefix(why) == true, "\(path)\(query): \(answer.status) \(answer.body)")
                #expect(answer.body.split(separator: "\n").count == 1)
            }
        }
        let basic = Data("anyone:\(collector.token)".utf8).base64EncodedString()
        let page = try await Curl.request(
            collector.baseURL + "?app=\(F.app)&channel=\(F.channel)&label=store", headers: ["Authorization: Basic \(basic)"])
        #expect(page.status == 400 && page.body.contains("not KEY=VALUE"), "\(page.body)")
        // Eight labels are one filter (no device has them all).
        let eight = (1...8).map { "&label=k\($0)=v" }.joined()
        #expect(try await collector.read(fleet + eight, token: collector.token).body.contains("\"devices\":0,"))
        #expect(collector.stop() == 0)
    }

    /// A batch whose labels break the grammar is refused whole with a 400 naming the label
    /// (counted as `invalid-field`), and nothing of it is stored.
    @Test func aBatchWithBadLabelsIsRefusedAndNothingStored() async throws {
        let dir = try TemporaryDirectory("collect-labels")
        let collector = try await CollectProcess(database: "sqlite:" + dir("reports.db"), scratch: dir.path)
        let good = String(decoding: F.heartbeats(device: 3).encoded(), as: UTF8.self)
        for (labels, why) in [
            ("{\"Store\":\"12\"}", "labels: the key \"Store\" must start with a lowercase letter"),
            ("{\"store\":\"\"}", "labels.store: the value is empty"),
            ("{\"store\":12}", "labels.store: not a string"),
            ("[]", "labels: not an object"),
            ("{" + (1...33).map { "\"k\($0)\":\"v\"" }.joined(separator: ",") + "}", "labels: 33 labels, more than 32"),
        ] {
            let body = good.replacingOccurrences(of: ",\"reports\":", with: ",\"labels\":\(labels),\"reports\":")
            let answer = try await collector.post(Data(body.utf8))
            #expect(answer.status == 400 && F.error(answer) == why, "\(labels): \(answer.body)")
        }
        #expect(try await F.storedReports(dir("reports.db")) == 0)
        let metrics = try await collector.read("metrics", token: collector.token)
        #expect(metrics.body.contains("fleet_collector_batches_refused_total{reason=\"invalid-field\"} 5"), "\(metrics.body)")
        #expect(collector.stop() == 0)
    }

    /// A device not admitted yet has its labels listed with its held reports; once admitted
    /// its row in the fleet starts from them, so its cohort counts it at once.
    @Test func aHeldDeviceCountsInItsCohortOnceAdmitted() async throws {
        let dir = try TemporaryDirectory("collect-labels")
        let admin = dir("admin.token")
        try Data("admin-token-0123456789abcdef\n".utf8).write(to: URL(fileURLWithPath: admin))
        chmod(admin, 0o600)
        let collector = try await CollectProcess(
            database: "sqlite:" + dir("reports.db"), arguments: ["--admission", "manual", "--admin-token-file", admin], scratch: dir.path)
        let device = try DeviceSigner()
        let signed = try device.signed(try F.labelled(Self.trial(1), ["store": "12"]))
        let answer = try await collector.post(signed.body, headers: signed.headers)
        #expect(answer.status == 200 && answer.body.contains("\"held\":true"), "\(answer.body)")
        let pending = try await Self.devices(collector, ["store=12"])
        #expect(pending.devices.map(\.status) == ["pending"] && pending.devices.first?.labels == ["store": "12"], "\(pending)")
        #expect(try await Self.summary(collector, ["store=12"]).devices == 0, "held reports never count")
        let admit = try await Curl.request(
            collector.baseURL + "v1/devices/admit", method: "POST",
            headers: ["Authorization: Bearer admin-token-0123456789abcdef", "Content-Type: application/json"],
            body: Data("{\"devices\":[\"\(device.publicKey)\"]}".utf8))
        #expect(admit.status == 200, "\(admit.body)")
        let cohort = try await Self.summary(collector, ["store=12"])
        #expect(cohort.devices == 1 && cohort.versions.first { $0.version == "1.1.0" }?.trials == 1, "\(cohort)")
        #expect(collector.stop() == 0)
    }

    /// A database a collector of schema 3 wrote (before labels) is brought forward at start:
    /// every row kept, its devices with no labels; a device's next batch brings its labels.
    @Test func aSchemaThreeSQLiteDatabaseKeepsItsRowsAndItsDevicesGetNoLabels() async throws {
        let dir = try TemporaryDirectory("collect-labels")
        let device = try DeviceSigner()
        let base = Int64(Date().timeIntervalSince1970 * 1000) - 60_000
        let report = """
            device TEXT NOT NULL, stream TEXT NOT NULL DEFAULT '', seq BIGINT NOT NULL, app TEXT NOT NULL, channel TEXT NOT NULL,
              time_ms BIGINT NOT NULL, received_ms BIGINT NOT NULL, type TEXT NOT NULL, running TEXT NOT NULL,
              shell TEXT, version TEXT, from_version TEXT, reason TEXT, detail TEXT, via TEXT,
              bytes BIGINT, ms BIGINT, count BIGINT, rollout_percent INTEGER, rollout_paused INTEGER,
              PRIMARY KEY (device, stream, seq)
            """
        // The schema 3 collector's own statements (ReportSQL before labels).
        let script = """
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            db.executescript('''
            CREATE TABLE collector_schema (version INTEGER NOT NULL);
            INSERT INTO collector_schema VALUES (1); INSERT INTO collector_schema VALUES (3);
            CREATE TABLE reports (\(report));
            CREATE INDEX reports_by_channel ON reports (app, channel, time_ms);
            CREATE INDEX reports_by_received ON reports (received_ms);
            CREATE TABLE devices (app TEXT NOT NULL, channel TEXT NOT NULL, device TEXT NOT NULL,
              last_ms BIGINT NOT NULL, running TEXT NOT NULL, received_ms BIGINT NOT NULL, first_ms BIGINT,
              PRIMARY KEY (app, channel, device));
            CREATE INDEX devices_by_received ON devices (received_ms);
            CREATE TABLE held_reports (\(report));
            CREATE INDEX held_reports_by_received ON held_reports (received_ms);
            CREATE TABLE device_keys (device TEXT NOT NULL PRIMARY KEY, key TEXT NOT NULL, status TEXT NOT NULL,
              app TEXT NOT NULL, channel TEXT NOT NULL, first_ms BIGINT NOT NULL, last_ms BIGINT NOT NULL,
              held BIGINT NOT NULL DEFAULT 0);
            CREATE INDEX device_keys_by_key ON device_keys (key);
            CREATE INDEX device_keys_by_status ON device_keys (status, last_ms);
            CREATE TABLE admitted_keys (key TEXT NOT NULL PRIMARY KEY, added_ms BIGINT NOT NULL);
            CREATE TABLE rejected_keys (key TEXT NOT NULL PRIMARY KEY, rejected_ms BIGINT NOT NULL);
            CREATE UNIQUE INDEX device_keys_one_device ON device_keys (key) WHERE status <> 'rejected';
            ''')
            for seq in range(1, 4):
                db.execute("INSERT INTO reports (device, stream, seq, app, channel, time_ms, received_ms, type, running) VALUES (?, ?, ?, ?, ?, ?, ?, 'heartbeat', '1.0.0')",
                           ('\(F.device(7))', '\(device.stream)', seq, '\(F.app)', '\(F.channel)', \(base) + seq, \(base + 500) + seq))
            db.execute("INSERT INTO devices VALUES ('\(F.app)', '\(F.channel)', '\(F.device(7))', \(base + 3), '1.0.0', \(base + 503), \(base + 501))")
            db.execute("INSERT INTO device_keys VALUES ('\(F.device(7))', '\(device.publicKey)', 'accepted', '\(F.app)', '\(F.channel)', \(base + 501), \(base + 503), 0)")
            db.commit()
            """
        let made = try await Subprocess.run("/usr/bin/python3", ["-c", script, dir("old.db")])
        #expect(made.status == 0, "\(made.errorOutput)")
        let collector = try await CollectProcess(database: "sqlite:" + dir("old.db"), scratch: dir.path)
        #expect(try await F.rows(dir("old.db"), "SELECT MAX(version) FROM collector_schema") == ["5"])
        #expect(try await F.storedReports(dir("old.db")) == 3)
        #expect(
            try await F.rows(dir("old.db"), "SELECT device, running, last_ms, first_ms, '[' || labels || ']' FROM devices")
                == ["\(F.device(7))|1.0.0|\(base + 3)|\(base + 501)|[]"])
        #expect(try await F.rows(dir("old.db"), "SELECT device, status FROM device_keys") == ["\(F.device(7))|accepted"])
        #expect(try await Self.summary(collector).devices == 1)
        #expect(try await Self.summary(collector, ["store=12"]).devices == 0)
        // The device goes on with its key and its stream; its next batch carries its labels.
        try await Self.post(collector, try device.signed(try F.labelled(F.heartbeats(device: 7, from: 3, count: 2), ["store": "12"])), accepted: 1)
        #expect(try await Self.summary(collector, ["store=12"]).devices == 1)
        #expect(try await F.rows(dir("old.db"), "SELECT labels FROM devices") == ["{\"store\":\"12\"}"])
        #expect(collector.stop() == 0)
    }

    /// The same on PostgreSQL: a schema-3 database keeps its rows and gains empty labels,
    /// and a collector on PostgreSQL answers every cohort as the SQLite one does.
    @Test func onPostgreSQLASchemaThreeDatabaseIsBroughtForwardAndCohortsAnswerAsOnSQLite() async throws {
        let server = try await TestPostgres.shared()
        let url = try await server.createDatabase("labels")
        let database = String(url.split(separator: "/").last ?? "")
        let dir = try TemporaryDirectory("collect-labels")
        // The schema a collector of schema 3 made: written by one now and set back to 3
        // without what schemas 4 and 5 added, with a device of before.
        let maker = try await CollectProcess(database: url, scratch: dir.path)
        #expect(maker.stop() == 0)
        let old = try DeviceSigner()
        let base = Int64(Date().timeIntervalSince1970 * 1000) - 60_000
        _ = try await server.psql(
            """
            ALTER TABLE devices DROP COLUMN labels; DROP TABLE device_labels;
            ALTER TABLE reports DROP COLUMN mirror_bytes; ALTER TABLE held_reports DROP COLUMN mirror_bytes;
            DELETE FROM collector_schema; INSERT INTO collector_schema VALUES (3);
            INSERT INTO reports (device, stream, seq, app, channel, time_ms, received_ms, type, running)
              VALUES ('\(F.device(7))', '\(old.stream)', 1, '\(F.app)', '\(F.channel)', \(base), \(base + 500), 'heartbeat', '1.0.0');
            INSERT INTO devices VALUES ('\(F.app)', '\(F.channel)', '\(F.device(7))', \(base), '1.0.0', \(base + 500), \(base + 500));
            INSERT INTO device_keys (device, key, status, app, channel, first_ms, last_ms, held)
              VALUES ('\(F.device(7))', '\(old.publicKey)', 'accepted', '\(F.app)', '\(F.channel)', \(base + 500), \(base + 500), 0);
            """, database: database)
        let collector = try await CollectProcess(database: url, scratch: dir.path)
        let migrated = try await server.psql(
            "SELECT MAX(version), (SELECT COUNT(*) FROM reports), "
                + "(SELECT string_agg(device || ':' || running || ':' || first_ms || ':[' || labels || ']', ',') FROM devices), "
                + "(SELECT COUNT(*) FROM device_keys), (SELECT COUNT(*) FROM device_labels) FROM collector_schema", database: database)
        #expect(migrated.trimmingCharacters(in: .whitespacesAndNewlines) == "5|1|\(F.device(7)):1.0.0:\(base + 500):[]|1|0", "\(migrated)")
        try await Self.post(collector, try old.signed(try F.labelled(F.heartbeats(device: 7, from: 2, count: 1), ["ring": "beta"])), accepted: 1)
        let labelled = try await server.psql("SELECT labels FROM devices WHERE device = '\(F.device(7))'", database: database)
        #expect(labelled.trimmingCharacters(in: .whitespacesAndNewlines) == "{\"ring\":\"beta\"}", "\(labelled)")

        // The fleet of the SQLite test, on both stores: the same answer for every cohort.
        let sqlite = try await CollectProcess(database: "sqlite:" + dir("reports.db"), scratch: dir.path)
        let keys = try (1...5).map { _ in try DeviceSigner() }
        let labels: [[String: String]] = [
            ["store": "12", "ring": "beta"], ["store": "12", "ring": "prod"], ["store": "13", "site": "a_b"], [:], ["site": "axb"],
        ]
        for (i, key) in keys.enumerated() {
            let signed = try key.signed(try F.labelled(Self.trial(i + 1, rolledBack: i == 1), labels[i]))
            try await Self.post(collector, signed, accepted: 3)
            try await Self.post(sqlite, signed, accepted: 3)
        }
        for cohort in [["store=12"], ["ring=beta", "store=12"], ["site=a_b"], ["store=13"], ["store=1"], ["ring=beta"]] {
            let fromPostgres = try await Self.summary(collector, cohort)
            var fromSQLite = try await Self.summary(sqlite, cohort)
            if cohort == ["ring=beta"] {
                #expect(fromPostgres.devices == 2, "device 7 of before and device 1")
                fromSQLite = fromPostgres
            }
            #expect(fromPostgres == fromSQLite, "\(cohort)")
        }
        #expect(try await Self.summary(collector, ["store=12"]).devices == 2)
        #expect(try await Self.summary(collector, ["site=a_b"]).devices == 1)
        let listed = try await Self.devices(collector, ["store=12"])
        #expect(Set(listed.devices.map(\.device.text)) == [F.device(1), F.device(2)] && listed.counts == ["accepted": 2], "\(listed)")
        #expect(collector.stop() == 0)
        #expect(sqlite.stop() == 0)
    }
}

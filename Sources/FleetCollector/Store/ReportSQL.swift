import FleetReports
import Foundation

/// The SQL text every store runs: standard SQL that SQLite (3.24+) and PostgreSQL both
/// accept (`ON CONFLICT`, window functions, positional `GROUP BY`), with `?` placeholders;
/// a PostgreSQL store numbers them with ``numbered(_:)``.
public enum ReportSQL {
    /// The schema this collector writes; a database with a newer one is refused, one with
    /// an older one is brought forward by ``migrations``.
    public static let schemaVersion: Int64 = 5

    /// The schema ``createSchema`` makes a new database in: it is then brought forward by
    /// the ``migrations`` from there, as an older database is (so the tables have one
    /// shape, whichever way they were made).
    public static let createdSchemaVersion: Int64 = 4

    /// The columns of a stored report in the tables ``reportTable(_:)`` makes (schema 4).
    static let schema4ColumnList = """
        device, stream, seq, app, channel, time_ms, received_ms, type, running, shell, version,
            from_version, reason, detail, via, bytes, ms, count, rollout_percent, rollout_paused
        """

    /// The columns of a stored report, in the order of ``insertReport``'s placeholders:
    /// schema 4's, and `mirror_bytes` (schema 5: a download's bytes from site mirrors).
    static let reportColumnList = schema4ColumnList + ", mirror_bytes"

    /// A table of reports: `reports` (admitted devices) or `held_reports` (devices not
    /// admitted: stored apart, never in a summary).
    static func reportTable(_ name: String) -> String {
        """
        CREATE TABLE IF NOT EXISTS \(name) (
            device TEXT NOT NULL, stream TEXT NOT NULL DEFAULT '', seq BIGINT NOT NULL, app TEXT NOT NULL, channel TEXT NOT NULL,
            time_ms BIGINT NOT NULL, received_ms BIGINT NOT NULL, type TEXT NOT NULL, running TEXT NOT NULL,
            shell TEXT, version TEXT, from_version TEXT, reason TEXT, detail TEXT, via TEXT,
            bytes BIGINT, ms BIGINT, count BIGINT, rollout_percent INTEGER, rollout_paused INTEGER,
            PRIMARY KEY (device, stream, seq))
        """
    }

    /// The indexes of `reports` (made again after a migration rebuilt the table).
    static let reportIndexes = [
        "CREATE INDEX IF NOT EXISTS reports_by_channel ON reports (app, channel, time_ms)",
        "CREATE INDEX IF NOT EXISTS reports_by_received ON reports (received_ms)",
        ProblemSummaryQuery.index,
    ]

    /// Statements that create the schema, in order (each idempotent).
    public static let createSchema: [String] =
        [
            "CREATE TABLE IF NOT EXISTS collector_schema (version INTEGER NOT NULL)",
            reportTable("reports"),
        ] + reportIndexes + [
            """
            CREATE TABLE IF NOT EXISTS devices (
                app TEXT NOT NULL, channel TEXT NOT NULL, device TEXT NOT NULL,
                last_ms BIGINT NOT NULL, running TEXT NOT NULL, received_ms BIGINT NOT NULL, first_ms BIGINT,
                labels TEXT NOT NULL DEFAULT '',
                PRIMARY KEY (app, channel, device))
            """,
            "CREATE INDEX IF NOT EXISTS devices_by_received ON devices (received_ms)",
            // Each device id's labels as its latest stored batch carried them, admitted or held
            // (`fleet devices`; an admitted device's row in `devices` starts from them).
            """
            CREATE TABLE IF NOT EXISTS device_labels (
                device TEXT NOT NULL PRIMARY KEY, labels TEXT NOT NULL, received_ms BIGINT NOT NULL)
            """,
            "CREATE INDEX IF NOT EXISTS device_labels_by_received ON device_labels (received_ms)",
            reportTable("held_reports"),
            "CREATE INDEX IF NOT EXISTS held_reports_by_received ON held_reports (received_ms)",
            // Each device id bound to the first key that signed for it (docs/fleet-reports.md#device-keys).
            """
            CREATE TABLE IF NOT EXISTS device_keys (
                device TEXT NOT NULL PRIMARY KEY, key TEXT NOT NULL, status TEXT NOT NULL,
                app TEXT NOT NULL, channel TEXT NOT NULL, first_ms BIGINT NOT NULL, last_ms BIGINT NOT NULL,
                held BIGINT NOT NULL DEFAULT 0)
            """,
            "CREATE INDEX IF NOT EXISTS device_keys_by_key ON device_keys (key)",
            "CREATE INDEX IF NOT EXISTS device_keys_by_status ON device_keys (status, last_ms)",
            // Keys an operator admitted before (or after) their device reported.
            "CREATE TABLE IF NOT EXISTS admitted_keys (key TEXT NOT NULL PRIMARY KEY, added_ms BIGINT NOT NULL)",
            // Keys an operator rejected: no admit list admits them again; `fleet admit` lifts it.
            "CREATE TABLE IF NOT EXISTS rejected_keys (key TEXT NOT NULL PRIMARY KEY, rejected_ms BIGINT NOT NULL)",
        ]

    /// Made after the migrations (which make the data fit them): one device per key, so a
    /// key taken from one device speaks for that device alone, even when two collectors on
    /// one database bind it at the same moment.
    public static let constraints: [String] = [
        "CREATE UNIQUE INDEX IF NOT EXISTS device_keys_one_device ON device_keys (key) WHERE status <> 'rejected'"
    ]

    /// Of the ids bound to one key, those bound after the first (first sight, then id).
    static let laterIdsOfAKey = """
        EXISTS (SELECT 1 FROM device_keys o WHERE o.key = device_keys.key
            AND (o.first_ms < device_keys.first_ms OR (o.first_ms = device_keys.first_ms AND o.device < device_keys.device)))
        """

    /// What brings a database of an older schema forward, by the version it has: each list
    /// runs in the transaction that records the new version.
    public static let migrations: [Int64: [String]] = [
        // 1 → 2: the journal's stream joins the key of a report; devices learn when they were
        // first heard from.
        1: [
            "ALTER TABLE reports RENAME TO reports_v1",
            "DROP INDEX IF EXISTS reports_by_channel",
            "DROP INDEX IF EXISTS reports_by_received",
            reportTable("reports"),
            "INSERT INTO reports (\(schema4ColumnList)) SELECT device, '', seq, app, channel, time_ms, received_ms, type, running, "
                + "shell, version, from_version, reason, detail, via, bytes, ms, count, rollout_percent, rollout_paused FROM reports_v1",
            "DROP TABLE reports_v1",
        ] + reportIndexes + [
            "ALTER TABLE devices ADD COLUMN first_ms BIGINT",
            """
            UPDATE devices SET first_ms = (SELECT MIN(r.received_ms) FROM reports r
                WHERE r.app = devices.app AND r.channel = devices.channel AND r.device = devices.device)
            """,
        ],
        // 2 → 3: one device per key. A key that signed for several ids keeps the first one;
        // the later ones are rejected (their held reports deleted, what they stored no longer
        // counted by the guard), as an operator would have.
        2: [
            "DELETE FROM held_reports WHERE device IN (SELECT device FROM device_keys WHERE \(laterIdsOfAKey))",
            "UPDATE device_keys SET status = 'rejected', held = 0 WHERE \(laterIdsOfAKey)",
        ],
        // 3 → 4: devices carry their labels (the latest batch's; none known yet for the
        // devices of before, until their next batch). `device_labels` is new: made by
        // ``createSchema``.
        3: [
            "ALTER TABLE devices ADD COLUMN labels TEXT NOT NULL DEFAULT ''"
        ],
        // 4 → 5: a `downloaded` report's bytes from site mirrors (docs/site-mirror.md#devices).
        4: [
            "ALTER TABLE reports ADD COLUMN mirror_bytes BIGINT",
            "ALTER TABLE held_reports ADD COLUMN mirror_bytes BIGINT",
        ],
    ]

    /// The recorded schema versions (none in a new database).
    public static let selectSchemaVersion = "SELECT MAX(version) FROM collector_schema"
    /// Records ``schemaVersion`` (`?`: the version).
    public static let insertSchemaVersion = "INSERT INTO collector_schema (version) VALUES (?)"

    /// One report; a duplicate (device, stream, seq) is skipped. Arguments:
    /// ``reportArguments(_:of:received:)``.
    public static let insertReport = insertReport(into: "reports")

    /// One report into `table` (`reports` or `held_reports`).
    static func insertReport(into table: String) -> String {
        """
        INSERT INTO \(table) (\(reportColumnList))
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (device, stream, seq) DO NOTHING
        """
    }

    /// The device's last-seen row, moved forward only; `first_ms` kept once set; the labels
    /// those of the batch stored now (the latest received wins). Arguments:
    /// ``deviceArguments(_:stored:received:)``.
    public static let upsertDevice = """
        INSERT INTO devices (app, channel, device, last_ms, running, received_ms, first_ms, labels) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (app, channel, device) DO UPDATE SET
            last_ms = CASE WHEN excluded.last_ms >= devices.last_ms THEN excluded.last_ms ELSE devices.last_ms END,
            running = CASE WHEN excluded.last_ms >= devices.last_ms THEN excluded.running ELSE devices.running END,
            received_ms = excluded.received_ms,
            first_ms = CASE WHEN devices.first_ms IS NULL OR excluded.first_ms < devices.first_ms
                THEN excluded.first_ms ELSE devices.first_ms END,
            labels = excluded.labels
        """

    /// The device id's labels, those of the batch stored now (admitted or held). Arguments:
    /// ``labelArguments(_:received:)``.
    public static let upsertLabels = """
        INSERT INTO device_labels (device, labels, received_ms) VALUES (?, ?, ?)
        ON CONFLICT (device) DO UPDATE SET labels = excluded.labels, received_ms = excluded.received_ms
        """

    /// Deletes reports received before a time (`?`: milliseconds).
    public static let pruneReports = "DELETE FROM reports WHERE received_ms < ?"
    /// Deletes devices not heard from since a time (`?`: milliseconds).
    public static let pruneDevices = "DELETE FROM devices WHERE received_ms < ?"
    /// Deletes the labels of devices not heard from since a time (`?`: milliseconds).
    public static let pruneLabels = "DELETE FROM device_labels WHERE received_ms < ?"
    /// Deletes held reports received before a time (`?`: milliseconds).
    public static let pruneHeld = "DELETE FROM held_reports WHERE received_ms < ?"
    /// Forgets devices that were never admitted and not heard from since a time (`?`: ms).
    public static let prunePendingKeys = "DELETE FROM device_keys WHERE status = 'pending' AND last_ms < ?"

    /// The arguments of ``insertReport`` for one report of `batch`.
    public static func reportArguments(_ r: FleetReport, of batch: ReportBatch, received: Date) -> [SQLValue] {
        [
            .text(batch.device.text), .text(batch.streamKey), .integer(r.seq), .text(batch.app), .text(batch.channel), .integer(millis(r.time)),
            .integer(millis(received)), .text(r.type.rawValue), .text(r.running), .optional(r.shell), .optional(r.version),
            .optional(r.from), .optional(r.reason?.rawValue), .optional(r.detail), .optional(r.via?.rawValue), .optional(r.bytes),
            .optional(r.ms), .optional(r.count), .optional(r.rollout.map { Int64($0.percent) }),
            .optional(r.rollout.map { $0.paused ? 1 : 0 }), .optional(r.mirrorBytes),
        ]
    }

    /// The arguments of ``upsertDevice`` for `batch`: its latest report by time, then seq,
    /// among those `stored` now (a duplicate, stored before or refused, moves nothing); nil
    /// when none was stored.
    public static func deviceArguments(_ batch: ReportBatch, stored: Set<Int64>, received: Date) -> [SQLValue]? {
        guard let last = batch.reports.filter({ stored.contains($0.seq) }).max(by: { ($0.time, $0.seq) < ($1.time, $1.seq) }) else {
            return nil
        }
        return [
            .text(batch.app), .text(batch.channel), .text(batch.device.text), .integer(millis(last.time)), .text(last.running),
            .integer(millis(received)), .integer(millis(received)), .text(batch.labelsJSON),
        ]
    }

    /// The arguments of ``upsertLabels`` for `batch`.
    public static func labelArguments(_ batch: ReportBatch, received: Date) -> [SQLValue] {
        [.text(batch.device.text), .text(batch.labelsJSON), .integer(millis(received))]
    }

    /// `sql` with each `?` replaced by `$1`, `$2`, … (PostgreSQL's placeholders). The shared
    /// SQL has no `?` inside string literals.
    public static func numbered(_ sql: String) -> String {
        var out = ""
        var n = 0
        for ch in sql {
            if ch == "?" {
                n += 1
                out += "$\(n)"
            } else {
                out.append(ch)
            }
        }
        return out
    }

    /// Whole milliseconds since 1970 (the stored form of every time).
    public static func millis(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded(.down)) }
}

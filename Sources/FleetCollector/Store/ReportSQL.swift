import FleetReports
import Foundation

/// The SQL text every store runs: standard SQL that SQLite (3.24+) and PostgreSQL both
/// accept (`ON CONFLICT`, window functions, positional `GROUP BY`), with `?` placeholders;
/// a PostgreSQL store numbers them with ``numbered(_:)``.
public enum ReportSQL {
    /// The schema this collector writes; a database with a newer one is refused.
    public static let schemaVersion: Int64 = 1

    /// Statements that create the schema, in order (each idempotent).
    public static let createSchema: [String] = [
        "CREATE TABLE IF NOT EXISTS collector_schema (version INTEGER NOT NULL)",
        """
        CREATE TABLE IF NOT EXISTS reports (
            device TEXT NOT NULL, seq BIGINT NOT NULL, app TEXT NOT NULL, channel TEXT NOT NULL,
            time_ms BIGINT NOT NULL, received_ms BIGINT NOT NULL, type TEXT NOT NULL, running TEXT NOT NULL,
            shell TEXT, version TEXT, from_version TEXT, reason TEXT, detail TEXT, via TEXT,
            bytes BIGINT, ms BIGINT, count BIGINT, rollout_percent INTEGER, rollout_paused INTEGER,
            PRIMARY KEY (device, seq))
        """,
        "CREATE INDEX IF NOT EXISTS reports_by_channel ON reports (app, channel, time_ms)",
        "CREATE INDEX IF NOT EXISTS reports_by_received ON reports (received_ms)",
        """
        CREATE TABLE IF NOT EXISTS devices (
            app TEXT NOT NULL, channel TEXT NOT NULL, device TEXT NOT NULL,
            last_ms BIGINT NOT NULL, running TEXT NOT NULL, received_ms BIGINT NOT NULL,
            PRIMARY KEY (app, channel, device))
        """,
        "CREATE INDEX IF NOT EXISTS devices_by_received ON devices (received_ms)",
    ]

    /// The recorded schema versions (none in a new database).
    public static let selectSchemaVersion = "SELECT MAX(version) FROM collector_schema"
    /// Records ``schemaVersion`` (`?`: the version).
    public static let insertSchemaVersion = "INSERT INTO collector_schema (version) VALUES (?)"

    /// One report; a duplicate (device, seq) is skipped. Arguments: ``reportArguments(_:of:received:)``.
    public static let insertReport = """
        INSERT INTO reports (device, seq, app, channel, time_ms, received_ms, type, running, shell, version,
            from_version, reason, detail, via, bytes, ms, count, rollout_percent, rollout_paused)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (device, seq) DO NOTHING
        """

    /// The device's last-seen row, moved forward only. Arguments: ``deviceArguments(_:received:)``.
    public static let upsertDevice = """
        INSERT INTO devices (app, channel, device, last_ms, running, received_ms) VALUES (?, ?, ?, ?, ?, ?)
        ON CONFLICT (app, channel, device) DO UPDATE SET
            last_ms = CASE WHEN excluded.last_ms >= devices.last_ms THEN excluded.last_ms ELSE devices.last_ms END,
            running = CASE WHEN excluded.last_ms >= devices.last_ms THEN excluded.running ELSE devices.running END,
            received_ms = excluded.received_ms
        """

    /// Deletes reports received before a time (`?`: milliseconds).
    public static let pruneReports = "DELETE FROM reports WHERE received_ms < ?"
    /// Deletes devices not heard from since a time (`?`: milliseconds).
    public static let pruneDevices = "DELETE FROM devices WHERE received_ms < ?"

    /// The arguments of ``insertReport`` for one report of `batch`.
    public static func reportArguments(_ r: FleetReport, of batch: ReportBatch, received: Date) -> [SQLValue] {
        [
            .text(batch.device), .integer(r.seq), .text(batch.app), .text(batch.channel), .integer(millis(r.time)),
            .integer(millis(received)), .text(r.type.rawValue), .text(r.running), .optional(r.shell), .optional(r.version),
            .optional(r.from), .optional(r.reason?.rawValue), .optional(r.detail), .optional(r.via?.rawValue), .optional(r.bytes),
            .optional(r.ms), .optional(r.count), .optional(r.rollout.map { Int64($0.percent) }),
            .optional(r.rollout.map { $0.paused ? 1 : 0 }),
        ]
    }

    /// The arguments of ``upsertDevice`` for `batch` (its latest report by time, then seq).
    public static func deviceArguments(_ batch: ReportBatch, received: Date) -> [SQLValue]? {
        guard let last = batch.reports.max(by: { ($0.time, $0.seq) < ($1.time, $1.seq) }) else { return nil }
        return [
            .text(batch.app), .text(batch.channel), .text(batch.device), .integer(millis(last.time)), .text(last.running),
            .integer(millis(received)),
        ]
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

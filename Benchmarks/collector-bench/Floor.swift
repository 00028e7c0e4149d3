// collector-bench floor: the rows of an ingest run written by a plain program, the floor
// the collector's SQLite ingest is measured against (Scripts/bench/collector).
//
// The same batches as `ingest` (the same JSON, read by the collector's own reader), their
// reports written into the collector's own schema (ReportSQL) with the collector's own
// INSERT, through the SQLite C API: WAL, synchronous=FULL, one transaction per batch, one
// prepared statement bound column by column. No HTTP, no admission, no last-seen row: what
// storing the reports alone costs. Only the transactions are timed (building and reading
// each batch's JSON comes before its BEGIN).
import FleetCollector
import FleetReports
import Foundation
import GRDBSQLite

/// Why the floor run stopped.
struct FloorFailure: Error, CustomStringConvertible {
    let description: String
}

/// Writes `batches` batches (`makeBatch(k)`: batch k's JSON) into a new SQLite database at
/// `path`; returns the seconds spent in their transactions.
func writeFloor(path: String, batches: Int, makeBatch: (Int) -> [UInt8]) throws -> Double {
    var handle: OpaquePointer?
    guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK, let db = handle else {
        throw FloorFailure(description: "cannot open \(path)")
    }
    defer { sqlite3_close_v2(db) }
    func exec(_ sql: String) throws {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
            throw FloorFailure(description: "\(sql.prefix(60)): \(String(cString: sqlite3_errmsg(db)))")
        }
    }
    try exec("PRAGMA journal_mode = WAL")
    try exec("PRAGMA synchronous = FULL")
    try exec("BEGIN")
    for statement in ReportSQL.createSchema + ReportSQL.constraints { try exec(statement) }
    // A new database is made in an older schema's shape and brought forward as the collector
    // brings it: the same columns the collector writes.
    for (version, steps) in ReportSQL.migrations.sorted(by: { $0.key < $1.key }) where version >= ReportSQL.createdSchemaVersion {
        for statement in steps { try exec(statement) }
    }
    try exec("INSERT INTO collector_schema (version) VALUES (\(ReportSQL.schemaVersion))")
    try exec("COMMIT")

    var prepared: OpaquePointer?
    guard sqlite3_prepare_v2(db, ReportSQL.insertReport, -1, &prepared, nil) == SQLITE_OK, let insert = prepared else {
        throw FloorFailure(description: "cannot prepare the insert: \(String(cString: sqlite3_errmsg(db)))")
    }
    defer { sqlite3_finalize(insert) }
    // SQLITE_TRANSIENT: SQLite copies each text as it is bound.
    let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
    var seconds = 0.0
    for k in 0..<batches {
        let batch = try ReportBatch.decode(makeBatch(k))
        let received = Date()
        let began = ContinuousClock.now
        try exec("BEGIN")
        for report in batch.reports {
            for (i, value) in ReportSQL.reportArguments(report, of: batch, received: received).enumerated() {
                let column = Int32(i + 1)
                switch value {
                case .integer(let n): sqlite3_bind_int64(insert, column, n)
                case .text(let s): sqlite3_bind_text(insert, column, s, -1, transient)
                case .null: sqlite3_bind_null(insert, column)
                }
            }
            guard sqlite3_step(insert) == SQLITE_DONE, sqlite3_changes(db) == 1 else {
                throw FloorFailure(description: "report \(report.seq) of \(batch.device) not stored: \(String(cString: sqlite3_errmsg(db)))")
            }
            sqlite3_reset(insert)
        }
        try exec("COMMIT")
        let elapsed = ContinuousClock.now - began
        seconds += Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }
    return seconds
}

import FleetReports
import Foundation
import GRDB
import GRDBSQLite

/// The insert of a batch's reports into SQLite, bound column by column through the SQLite
/// C API on GRDB's cached statement, inside GRDB's transaction. GRDB's own arguments
/// (`StatementArguments`) convert each value through generic code that cost more than the
/// insert itself: a third of the collector's instructions per batch (BENCHMARKS.md, issue 68).
/// The values are still ``ReportSQL/reportArguments(_:of:received:)``, the same for every
/// store, so the columns cannot drift from the statement's placeholders.
struct SQLiteReportInsert {
    /// SQLite copies each text as it is bound.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    let statement: Statement
    let db: Database

    /// The insert into `table` (`reports` or `held_reports`), prepared once per connection.
    init(_ db: Database, table: String) throws {
        self.db = db
        statement = try db.cachedStatement(sql: ReportSQL.insertReport(into: table))
    }

    /// Inserts one report's row; true when it was stored, false when its (device, stream,
    /// seq) already was (the statement's `ON CONFLICT … DO NOTHING`).
    /// - Throws: GRDB's `DatabaseError` (the transaction is then rolled back by GRDB).
    func insert(_ values: [SQLValue]) throws -> Bool {
        let handle = statement.sqliteStatement
        sqlite3_reset(handle)
        for (i, value) in values.enumerated() {
            let column = Int32(i + 1)
            let code: Int32
            switch value {
            case .integer(let n): code = sqlite3_bind_int64(handle, column, n)
            case .text(let s): code = Self.bind(s, column, handle)
            case .null: code = sqlite3_bind_null(handle, column)
            }
            guard code == SQLITE_OK else { throw failure(code) }
        }
        let code = sqlite3_step(handle)
        guard code == SQLITE_DONE else {
            sqlite3_reset(handle)
            throw failure(code)
        }
        return sqlite3_changes(db.sqliteConnection) > 0
    }

    /// Binds `text`'s UTF-8 bytes where Swift keeps them (no C string made first, no length
    /// counted), copied by SQLite.
    private static func bind(_ text: String, _ column: Int32, _ handle: OpaquePointer?) -> Int32 {
        var text = text
        return text.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { sqlite3_bind_text(handle, column, $0.baseAddress, Int32($0.count), Self.transient) }
        }
    }

    private func failure(_ code: Int32) -> DatabaseError {
        DatabaseError(
            resultCode: ResultCode(rawValue: code), message: db.sqliteConnection.map { String(cString: sqlite3_errmsg($0)) },
            sql: statement.sql)
    }
}

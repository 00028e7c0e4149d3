import FleetReports
import Foundation
import GRDB

/// The embedded store: one SQLite file in WAL mode through GRDB (`sqlite:PATH`). Readers
/// never wait for the writer; each batch is one transaction, durable when it commits
/// (`synchronous=FULL`), so a report acknowledged survives a SIGKILL or a power loss.
public final class SQLiteReportStore: ReportStore, SQLQuerying {
    let pool: DatabasePool
    /// The batches' writer: those waiting while it commits are committed together.
    let group: SQLiteGroupCommit
    /// The file.
    public let path: String

    /// Opens (creating when missing) the database at `path`; call ``prepare()`` before use.
    /// `busyTimeout`: how long a write waits for another connection's lock (seconds).
    /// - Throws: ``FleetCollectorError`` `.cannotOpenDatabase`.
    public init(path: String, busyTimeout: Double = 10) throws {
        self.path = path
        var config = Configuration()
        config.busyMode = .timeout(busyTimeout)
        config.maximumReaderCount = 4
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        do {
            pool = try DatabasePool(path: path, configuration: config)
        } catch {
            throw FleetCollectorError(.cannotOpenDatabase, "cannot open sqlite:\(path): \(Self.describe(error))", underlying: error)
        }
        group = SQLiteGroupCommit(pool: pool)
    }

    public func prepare() async throws {
        do {
            try await pool.write { db in
                for statement in ReportSQL.createSchema { try db.execute(sql: statement) }
                let found = try Int64.fetchOne(db, sql: ReportSQL.selectSchemaVersion)
                if let found, found > ReportSQL.schemaVersion {
                    throw FleetCollectorError(
                        .cannotOpenDatabase,
                        "sqlite:\(self.path) has schema \(found), newer than this collector's \(ReportSQL.schemaVersion)")
                }
                // A new database was made in `createdSchemaVersion`'s shape: brought forward from there.
                if (found ?? 0) < ReportSQL.schemaVersion {
                    for version in (found ?? ReportSQL.createdSchemaVersion)..<ReportSQL.schemaVersion {
                        for statement in ReportSQL.migrations[version] ?? [] { try db.execute(sql: statement) }
                    }
                }
                for statement in ReportSQL.constraints { try db.execute(sql: statement) }
                if found != ReportSQL.schemaVersion {
                    try db.execute(sql: ReportSQL.insertSchemaVersion, arguments: [ReportSQL.schemaVersion])
                }
            }
        } catch let error as FleetCollectorError {
            throw error
        } catch {
            throw FleetCollectorError(.cannotOpenDatabase, "cannot create the schema in sqlite:\(path): \(Self.describe(error))", underlying: error)
        }
    }

    public func insert(_ batch: ReportBatch, received: Date, admission: AdmissionMode) async throws -> IngestResult {
        let plan = BatchAdmission(batch: batch, mode: admission, received: received)
        // Built before the writer is taken: the writer holds the one write lock, so what it
        // does per report is what every batch waits for (BENCHMARKS.md, issue 68).
        let rows = batch.reports.map { ReportSQL.reportArguments($0, of: batch, received: received) }
        do {
            return try await group.write { db in try Self.ingest(db, plan: plan, rows: rows) }
        } catch let refusal as AdmissionRefusal {
            return IngestResult(accepted: 0, duplicates: 0, verdict: .refused(refusal))
        } catch {
            throw FleetCollectorError(.storeFailed, "cannot store the batch: \(Self.describe(error))", underlying: error)
        }
    }

    /// One batch in the writer's transaction (``SQLiteGroupCommit``: perhaps with others
    /// before and after it): its admission's reads and decision, then its reports (`rows`:
    /// their arguments) and the rows that follow them. A refusal writes nothing.
    static func ingest(_ db: Database, plan: BatchAdmission, rows: [[SQLValue]]) throws -> IngestResult {
        let reads = try plan.reads.map { try Self.rows(db, $0) }
        let decision = plan.decide(reads)
        guard let table = decision.table else {
            return IngestResult(accepted: 0, duplicates: 0, verdict: decision.verdict)
        }
        // A batch that binds or admits a key confirms the key bound then. The write lock is
        // held from the transaction's start (GRDB begins it IMMEDIATE), so a batch that binds
        // nothing has nothing to confirm, and the confirmation cannot fail; should it, the
        // refusal is thrown: the transaction is rolled back (a group's batches are then
        // written again, each alone), so the batch's statements go and no one else's.
        for statement in decision.before { try Self.run(db, statement) }
        if !decision.before.isEmpty, let confirm = plan.confirm, let refusal = plan.confirmed(try Self.rows(db, confirm)) {
            throw refusal
        }
        return try store(db, plan: plan, table: table, rows: rows, verdict: decision.verdict)
    }

    /// Inserts a batch's reports into `table`, then the statements after them.
    private static func store(
        _ db: Database, plan: BatchAdmission, table: String, rows: [[SQLValue]], verdict: AdmissionVerdict
    ) throws -> IngestResult {
        let reports = plan.batch.reports
        let insert = try SQLiteReportInsert(db, table: table)
        var stored = Set<Int64>(minimumCapacity: rows.count)
        for (report, row) in zip(reports, rows) where try insert.insert(row) {
            stored.insert(report.seq)
        }
        for statement in plan.after(table, stored: stored) { try Self.run(db, statement) }
        return IngestResult(accepted: stored.count, duplicates: reports.count - stored.count, storedSeqs: stored, verdict: verdict)
    }

    public func execute(_ statements: [SQLStatement]) async throws -> [Int] {
        do {
            return try await pool.write { db in
                try statements.map { statement in
                    try db.execute(sql: statement.sql, arguments: Self.arguments(statement.arguments))
                    return db.changesCount
                }
            }
        } catch {
            throw FleetCollectorError(.storeFailed, "cannot change the database: \(Self.describe(error))", underlying: error)
        }
    }

    /// The rows of one statement of a batch's admission. Its SQL is one of a few fixed texts:
    /// prepared once per connection (GRDB's statement cache), not per batch.
    static func rows(_ db: Database, _ statement: SQLStatement) throws -> [[SQLValue]] {
        try Row.fetchAll(db.cachedStatement(sql: statement.sql), arguments: arguments(statement.arguments)).map(values)
    }

    /// Runs one statement of a batch's admission (a fixed text, prepared once).
    static func run(_ db: Database, _ statement: SQLStatement) throws {
        try db.cachedStatement(sql: statement.sql).execute(arguments: arguments(statement.arguments))
    }

    static func values(_ row: Row) -> [SQLValue] {
        row.databaseValues.map { value in
            switch value.storage {
            case .int64(let n): return .integer(n)
            case .string(let s): return .text(s)
            case .double(let d): return .integer(Int64(d))
            case .null, .blob: return .null
            }
        }
    }

    public func summary(app: String, channel: String, windowSeconds: Int, now: Date) async throws -> FleetSummary {
        try await FleetSummaryQuery.summary(on: self, app: app, channel: channel, windowSeconds: windowSeconds, now: now)
    }

    public func prune(before cutoff: Date) async throws -> Int {
        do {
            return try await pool.write { db in
                try db.execute(sql: ReportSQL.pruneReports, arguments: [ReportSQL.millis(cutoff)])
                let removed = db.changesCount
                try db.execute(sql: ReportSQL.pruneDevices, arguments: [ReportSQL.millis(cutoff)])
                try db.execute(sql: ReportSQL.pruneHeld, arguments: [ReportSQL.millis(cutoff)])
                try db.execute(sql: ReportSQL.pruneLabels, arguments: [ReportSQL.millis(cutoff)])
                try db.execute(sql: ReportSQL.prunePendingKeys, arguments: [ReportSQL.millis(cutoff)])
                return removed
            }
        } catch {
            throw FleetCollectorError(.storeFailed, "cannot prune: \(Self.describe(error))", underlying: error)
        }
    }

    public func query(_ sql: String, _ arguments: [SQLValue]) async throws -> [[SQLValue]] {
        do {
            return try await pool.read { db in
                try Row.fetchAll(db, sql: sql, arguments: Self.arguments(arguments)).map(Self.values)
            }
        } catch {
            throw FleetCollectorError(.storeFailed, "cannot read the reports: \(Self.describe(error))", underlying: error)
        }
    }

    public func close() async {
        try? pool.close()
    }

    static func arguments(_ values: [SQLValue]) -> StatementArguments {
        StatementArguments(
            values.map { value -> (any DatabaseValueConvertible)? in
                switch value {
                case .integer(let n): return n
                case .text(let s): return s
                case .null: return nil
                }
            })
    }

    static func describe(_ error: any Error) -> String {
        if let db = error as? DatabaseError { return db.message ?? "SQLite error \(db.resultCode.rawValue)" }
        return "\(error)"
    }
}

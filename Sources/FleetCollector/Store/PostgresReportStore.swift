import FleetReports
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// The store of a fleet that outgrows one machine: PostgreSQL through postgres-nio's
/// `PostgresClient` (`postgres://user[:password]@host[:port]/db`, also `postgresql://`;
/// `?sslmode=disable|prefer|require`). Several collectors may share one database: each is
/// stateless, and (device, seq) is the table's primary key, so a batch two collectors
/// receive is stored once.
///
/// It runs the same SQL text as ``SQLiteReportStore`` (``ReportSQL``, placeholders numbered
/// `$1, $2, …`): a batch is one transaction of one multi-row `INSERT … ON CONFLICT DO
/// NOTHING RETURNING seq` (its rows in seq order, so two collectors storing overlapping batches wait for
/// each other instead of deadlocking) and the device's upsert.
///
/// The pool is bounded (``maximumConnections``) and every operation has a deadline
/// (``operationTimeout``): a server that is down or silent makes an operation fail with
/// `.storeFailed` (a 503 for a request) in bounded time, and the pool connects again by
/// itself when the server is back.
public final class PostgresReportStore: ReportStore, SQLQuerying {
    /// The URL without its password.
    public let description: String
    /// The most connections the store opens.
    public let maximumConnections: Int
    /// How long one operation (waiting for a connection included) may take.
    public let operationTimeout: Duration

    private let client: PostgresClient
    private let running: Mutex<Task<Void, Never>?>
    private let logger: Logger

    /// Makes the store for `url` (no connection yet); call ``prepare()`` before use.
    /// - Parameters:
    ///   - maximumConnections: the pool's bound (each collector's; PostgreSQL's own
    ///     `max_connections` must hold every collector's).
    ///   - operationTimeout: the deadline of one operation.
    ///   - logger: where the pool logs connection failures.
    /// - Throws: ``FleetCollectorError`` `.badDatabaseURL` for a URL it cannot use.
    public init(
        url: URLComponents, maximumConnections: Int = 8, operationTimeout: Duration = .seconds(10),
        logger: Logger = Logger(label: "clientctl.collector.postgres", factory: { _ in SwiftLogNoOpLogHandler() })
    ) throws {
        var shown = url
        if shown.password != nil { shown.password = "***" }
        description = shown.string ?? "postgres://"
        guard let host = url.host, !host.isEmpty else {
            throw FleetCollectorError(.badDatabaseURL, "--database \(description): no host")
        }
        guard let user = url.user, !user.isEmpty else {
            throw FleetCollectorError(.badDatabaseURL, "--database \(description): no user (postgres://USER@HOST:PORT/DB)")
        }
        let database = String(url.path.drop { $0 == "/" })
        guard !database.isEmpty, !database.contains("/") else {
            throw FleetCollectorError(.badDatabaseURL, "--database \(description): no database name after the port (postgres://USER@HOST:PORT/DB)")
        }
        guard (1...1000).contains(maximumConnections) else {
            throw FleetCollectorError(.invalidConfiguration, "the PostgreSQL pool must hold 1 to 1000 connections, not \(maximumConnections)")
        }
        var tls = PostgresClient.Configuration.TLS.prefer(.makeClientConfiguration())
        for item in url.queryItems ?? [] {
            switch (item.name, item.value) {
            case ("sslmode", "disable"): tls = .disable
            case ("sslmode", "prefer"): tls = .prefer(.makeClientConfiguration())
            case ("sslmode", "require"): tls = .require(.makeClientConfiguration())
            default:
                throw FleetCollectorError(
                    .badDatabaseURL, "--database \(description): unknown option \(item.name)=\(item.value ?? "") (sslmode=disable|prefer|require)")
            }
        }
        var configuration = PostgresClient.Configuration(
            host: host, port: url.port ?? 5432, username: user, password: url.password, database: database, tls: tls)
        configuration.options.maximumConnections = maximumConnections
        configuration.options.minimumConnections = 0
        configuration.options.connectTimeout = .seconds(5)
        configuration.options.connectionIdleTimeout = .seconds(60)
        self.maximumConnections = maximumConnections
        self.operationTimeout = operationTimeout
        self.logger = logger
        client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        running = Mutex(nil)
    }

    deinit { running.withLock { $0?.cancel() } }

    public func prepare() async throws {
        startClient()
        do {
            try await bounded { client, logger in
                try await client.withTransaction(logger: logger) { connection in
                    // Two collectors starting at once would race on CREATE TABLE IF NOT EXISTS
                    // (a unique violation in pg_type): one creates the schema at a time.
                    try await connection.query("SELECT pg_advisory_xact_lock(3600036)", logger: logger)
                    for statement in ReportSQL.createSchema {
                        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                    }
                    var found: Int64?
                    for try await row in try await connection.query(PostgresQuery(unsafeSQL: ReportSQL.selectSchemaVersion), logger: logger) {
                        found = try Self.values(row).first?.integer
                    }
                    if let found, found > ReportSQL.schemaVersion {
                        throw FleetCollectorError(
                            .cannotOpenDatabase, "\(self.description) has schema \(found), newer than this collector's \(ReportSQL.schemaVersion)")
                    }
                    // A new database was made in `createdSchemaVersion`'s shape: brought forward from there.
                    if (found ?? 0) < ReportSQL.schemaVersion {
                        for version in (found ?? ReportSQL.createdSchemaVersion)..<ReportSQL.schemaVersion {
                            for statement in ReportSQL.migrations[version] ?? [] {
                                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                            }
                        }
                    }
                    for statement in ReportSQL.constraints {
                        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                    }
                    if found != ReportSQL.schemaVersion {
                        try await connection.query(
                            Self.query(ReportSQL.insertSchemaVersion, [.integer(ReportSQL.schemaVersion)]), logger: logger)
                    }
                }
            }
        } catch let error as FleetCollectorError where error.code == .cannotOpenDatabase {
            throw error
        } catch {
            throw FleetCollectorError(.cannotOpenDatabase, "cannot create the schema in \(description): \(Self.describe(error))", underlying: error)
        }
    }

    public func insert(_ batch: ReportBatch, received: Date, admission: AdmissionMode) async throws -> IngestResult {
        let reports = batch.reports.sorted { $0.seq < $1.seq }
        guard !reports.isEmpty else { return IngestResult(accepted: 0, duplicates: 0) }
        var arguments: [SQLValue] = []
        arguments.reserveCapacity(reports.count * Self.reportColumns)
        for report in reports { arguments += ReportSQL.reportArguments(report, of: batch, received: received) }
        let rows = arguments
        let plan = BatchAdmission(batch: batch, mode: admission, received: received)
        do {
            return try await bounded { client, logger in
                try await client.withTransaction(logger: logger) { connection in
                    // One batch of a device at a time: its key's binding is read and written once.
                    try await connection.query(Self.query("SELECT pg_advisory_xact_lock(hashtext(?))", [.text(batch.device.text)]), logger: logger)
                    var reads: [[[SQLValue]]] = []
                    for statement in plan.reads { reads.append(try await Self.rows(connection, statement, logger)) }
                    let decision = plan.decide(reads)
                    guard let table = decision.table else { return IngestResult(accepted: 0, duplicates: 0, verdict: decision.verdict) }
                    for statement in decision.before { try await connection.query(Self.query(statement.sql, statement.arguments), logger: logger) }
                    if let confirm = plan.confirm, let refusal = plan.confirmed(try await Self.rows(connection, confirm, logger)) { throw refusal }
                    // `RETURNING` names the rows stored now (a skipped duplicate returns none).
                    let insert = Self.query(Self.insertReports(into: table, rows: reports.count) + " RETURNING seq", rows)
                    var stored = Set<Int64>()
                    for try await row in try await connection.query(insert, logger: logger) {
                        if let seq = try Self.values(row).first?.integer { stored.insert(seq) }
                    }
                    for statement in plan.after(table, stored: stored) {
                        try await connection.query(Self.query(statement.sql, statement.arguments), logger: logger)
                    }
                    return IngestResult(
                        accepted: stored.count, duplicates: reports.count - stored.count, storedSeqs: stored, verdict: decision.verdict)
                }
            }
        } catch {
            if let refusal = Self.refusal(in: error) { return IngestResult(accepted: 0, duplicates: 0, verdict: .refused(refusal)) }
            throw FleetCollectorError(.storeFailed, "cannot store the batch in PostgreSQL: \(Self.describe(error))", underlying: error)
        }
    }

    public func execute(_ statements: [SQLStatement]) async throws -> [Int] {
        do {
            return try await bounded { client, logger in
                try await client.withTransaction(logger: logger) { connection in
                    var changed: [Int] = []
                    for statement in statements {
                        changed.append(
                            try await connection.query(Self.query(statement.sql, statement.arguments), logger: logger).get().metadata.rows ?? 0)
                    }
                    return changed
                }
            }
        } catch {
            throw FleetCollectorError(.storeFailed, "cannot change PostgreSQL: \(Self.describe(error))", underlying: error)
        }
    }

    /// The admission refusal a transaction's closure threw (postgres-nio wraps it).
    static func refusal(in error: any Error) -> AdmissionRefusal? {
        if let refusal = error as? AdmissionRefusal { return refusal }
        return (error as? PostgresTransactionError)?.closureError as? AdmissionRefusal
    }

    static func rows(_ connection: PostgresConnection, _ statement: SQLStatement, _ logger: Logger) async throws -> [[SQLValue]] {
        var rows: [[SQLValue]] = []
        for try await row in try await connection.query(query(statement.sql, statement.arguments), logger: logger) { rows.append(try values(row)) }
        return rows
    }

    public func summary(app: String, channel: String, windowSeconds: Int, now: Date) async throws -> FleetSummary {
        try await FleetSummaryQuery.summary(on: self, app: app, channel: channel, windowSeconds: windowSeconds, now: now)
    }

    public func prune(before cutoff: Date) async throws -> Int {
        let reports = Self.query(ReportSQL.pruneReports, [.integer(ReportSQL.millis(cutoff))])
        let devices = Self.query(ReportSQL.pruneDevices, [.integer(ReportSQL.millis(cutoff))])
        let held = Self.query(ReportSQL.pruneHeld, [.integer(ReportSQL.millis(cutoff))])
        let labels = Self.query(ReportSQL.pruneLabels, [.integer(ReportSQL.millis(cutoff))])
        let pending = Self.query(ReportSQL.prunePendingKeys, [.integer(ReportSQL.millis(cutoff))])
        do {
            return try await bounded { client, logger in
                try await client.withTransaction(logger: logger) { connection in
                    let removed = try await connection.query(reports, logger: logger).get().metadata.rows ?? 0
                    try await connection.query(devices, logger: logger)
                    try await connection.query(held, logger: logger)
                    try await connection.query(labels, logger: logger)
                    try await connection.query(pending, logger: logger)
                    return removed
                }
            }
        } catch {
            throw FleetCollectorError(.storeFailed, "cannot prune PostgreSQL: \(Self.describe(error))", underlying: error)
        }
    }

    public func query(_ sql: String, _ arguments: [SQLValue]) async throws -> [[SQLValue]] {
        let query = Self.query(sql, arguments)
        do {
            return try await bounded { client, logger in
                var rows: [[SQLValue]] = []
                for try await row in try await client.query(query, logger: logger) { rows.append(try Self.values(row)) }
                return rows
            }
        } catch {
            throw FleetCollectorError(.storeFailed, "cannot read the reports from PostgreSQL: \(Self.describe(error))", underlying: error)
        }
    }

    public func close() async {
        let task = running.withLock { task -> Task<Void, Never>? in
            defer { task = nil }
            return task
        }
        task?.cancel()
        await task?.value
    }

    // MARK: - Running

    /// Starts the client's background work (its pool) once.
    private func startClient() {
        running.withLock { task in
            guard task == nil else { return }
            let client = self.client
            task = Task { await client.run() }
        }
    }

    /// Runs `operation` with the client, failing with `.storeFailed` past
    /// ``operationTimeout``. The operation is left to end by itself (a query in flight ends
    /// with its connection); the caller's wait is what is bounded.
    private func bounded<T: Sendable>(
        _ operation: @escaping @Sendable (PostgresClient, Logger) async throws -> T
    ) async throws -> T {
        startClient()
        let client = self.client
        let logger = self.logger
        let timeout = operationTimeout
        let outcome = OneShot<T>()
        let work = Task<Void, Never> {
            do { outcome.finish(.success(try await operation(client, logger))) } catch { outcome.finish(.failure(error)) }
        }
        let deadline = Task<Void, Never> {
            try? await Task.sleep(for: timeout)
            if Task.isCancelled { return }
            outcome.finish(.failure(FleetCollectorError(.storeFailed, "PostgreSQL did not answer within \(timeout)")))
            work.cancel()
        }
        defer { deadline.cancel() }
        return try await withTaskCancellationHandler {
            try await outcome.value()
        } onCancel: {
            work.cancel()
        }
    }

    // MARK: - SQL

    /// The columns of one report row (``ReportSQL/insertReport``'s placeholders).
    static let reportColumns = ReportSQL.insertReport.filter { $0 == "?" }.count

    /// ``ReportSQL/insertReport`` into `table` with `rows` rows in its `VALUES`.
    static func insertReports(into table: String = "reports", rows: Int) -> String {
        let single = ReportSQL.insertReport(into: table)
        guard let values = single.range(of: "VALUES "), let conflict = single.range(of: "ON CONFLICT", options: .backwards)
        else { return single }
        let row = String(single[values.upperBound..<conflict.lowerBound]).trimmingCharacters(in: .whitespacesAndNewlines)
        let text =
            single[..<values.upperBound] + Array(repeating: row, count: rows).joined(separator: ", ") + " " + single[conflict.lowerBound...]
        return String(text)
    }

    /// `sql` (with `?` placeholders) and its arguments as a PostgreSQL query.
    static func query(_ sql: String, _ arguments: [SQLValue]) -> PostgresQuery {
        var binds = PostgresBindings(capacity: arguments.count)
        for value in arguments {
            switch value {
            case .integer(let n): binds.append(n)
            case .text(let s): binds.append(s)
            case .null: binds.appendNull()
            }
        }
        return PostgresQuery(unsafeSQL: ReportSQL.numbered(sql), binds: binds)
    }

    /// A row's columns as ``SQLValue``s: integers of every width, text, NULL.
    static func values(_ row: PostgresRow) throws -> [SQLValue] {
        try row.map { cell -> SQLValue in
            guard cell.bytes != nil else { return .null }
            switch cell.dataType {
            case .int2, .int4, .int8: return .integer(try cell.decode(Int64.self))
            case .bool: return .integer(try cell.decode(Bool.self) ? 1 : 0)
            default: return .text(try cell.decode(String.self))
            }
        }
    }

    /// One line on a PostgreSQL error: the server's message when it sent one.
    static func describe(_ error: any Error) -> String {
        if let psql = error as? PSQLError {
            if let message = psql.serverInfo?[.message] { return message }
            return "\(psql.code)"
        }
        return "\(error)"
    }
}

/// The outcome of one operation, delivered once to the one caller waiting for it, whichever
/// comes first: the operation's end, or its deadline.
private final class OneShot<T: Sendable>: Sendable {
    private enum State {
        case empty
        case waiting(CheckedContinuation<T, any Error>)
        case finished(Result<T, any Error>)
        case delivered
    }
    private let state = Mutex<State>(.empty)

    /// The first call delivers `result`; later calls do nothing.
    func finish(_ result: Result<T, any Error>) {
        let waiting = state.withLock { state -> CheckedContinuation<T, any Error>? in
            switch state {
            case .empty:
                state = .finished(result)
                return nil
            case .waiting(let continuation):
                state = .delivered
                return continuation
            case .finished, .delivered:
                return nil
            }
        }
        waiting?.resume(with: result)
    }

    /// Waits for the result (once).
    func value() async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let ready = state.withLock { state -> Result<T, any Error>? in
                switch state {
                case .empty:
                    state = .waiting(continuation)
                    return nil
                case .finished(let result):
                    state = .delivered
                    return result
                case .waiting, .delivered:
                    return .failure(FleetCollectorError(.storeFailed, "an operation's result was awaited twice"))
                }
            }
            if let ready { continuation.resume(with: ready) }
        }
    }
}

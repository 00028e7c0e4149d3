import FleetReports
import Foundation

/// Where a collector keeps reports (docs/fleet-reports.md#the-collector): SQLite
/// (``SQLiteReportStore``) or PostgreSQL. Every store runs the same SQL text
/// (``ReportSQL``; only placeholders differ) and builds the same summary
/// (``FleetSummaryQuery``), so both answer alike.
///
/// A store is shared by every request of a collector: its methods may be called at once.
public protocol ReportStore: SQLQuerying {
    /// Creates the tables and indexes when missing and records the schema version; refuses
    /// a database written by a newer collector.
    /// - Throws: ``FleetCollectorError`` `.cannotOpenDatabase`.
    func prepare() async throws

    /// Stores a batch in one transaction: every report, or none. A report whose (device,
    /// stream, seq) is already stored is a duplicate, not an error. Who sent it is judged
    /// first (``BatchAdmission``, under `admission`): an admitted device's reports join the
    /// fleet's and its last-seen row moves to the latest report stored now; a device not
    /// admitted has them held apart; a refused one has nothing stored (the result's
    /// ``IngestResult/verdict`` says which).
    /// - Parameter received: when the collector received it (pruning goes by this time).
    /// - Throws: ``FleetCollectorError`` `.storeFailed` (nothing stored).
    func insert(_ batch: ReportBatch, received: Date, admission: AdmissionMode) async throws -> IngestResult

    /// Runs `statements` in one transaction, in order; every one or none.
    /// - Returns: the rows each changed.
    /// - Throws: ``FleetCollectorError`` `.storeFailed` (nothing changed).
    func execute(_ statements: [SQLStatement]) async throws -> [Int]

    /// What the store knows of an app and channel, as of `now`; a device is *on* a version
    /// now when its last report is at most `windowSeconds` old.
    /// - Throws: ``FleetCollectorError`` `.storeFailed`.
    func summary(app: String, channel: String, windowSeconds: Int, now: Date) async throws -> FleetSummary

    /// Deletes reports received before `cutoff`, and devices not heard from since.
    /// - Returns: how many reports were deleted.
    /// - Throws: ``FleetCollectorError`` `.storeFailed`.
    func prune(before cutoff: Date) async throws -> Int

    /// Closes the store's connections (the collector is stopping).
    func close() async
}

extension ReportStore {
    /// ``insert(_:received:admission:)`` under open admission.
    public func insert(_ batch: ReportBatch, received: Date) async throws -> IngestResult {
        try await insert(batch, received: received, admission: .open)
    }
}

/// What a store did with one batch: the answer of `POST /v1/reports`.
public struct IngestResult: Sendable, Equatable, Codable {
    /// Reports stored now.
    public var accepted: Int
    /// Reports already stored under the same (device, seq), skipped.
    public var duplicates: Int
    /// The `seq` of each report stored now (the metrics count these; not in the JSON answer).
    public var storedSeqs: Set<Int64>
    /// Whether the reports joined the fleet's, were held apart, or were refused.
    public var verdict: AdmissionVerdict

    /// A result.
    public init(accepted: Int, duplicates: Int, storedSeqs: Set<Int64> = [], verdict: AdmissionVerdict = .accepted) {
        self.accepted = accepted
        self.duplicates = duplicates
        self.storedSeqs = storedSeqs
        self.verdict = verdict
    }

    enum CodingKeys: String, CodingKey {
        case accepted, duplicates
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(accepted: try c.decode(Int.self, forKey: .accepted), duplicates: try c.decode(Int.self, forKey: .duplicates))
    }
}

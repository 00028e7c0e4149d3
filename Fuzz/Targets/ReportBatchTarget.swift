import FleetReports

/// A device's report batch as a collector reads it (`ReportBatch.decode`): whatever it
/// accepts must be within the batch limits and survive encode → decode unchanged.
enum ReportBatchTarget: FuzzTarget {
    static let name = "report-batch"

    static func run(_ data: [UInt8]) {
        guard let batch = try? ReportBatch.decode(data) else { return }
        guard (1...ReportBatch.maxReports).contains(batch.reports.count) else {
            FuzzFinding.fail(name, "accepted \(batch.reports.count) reports")
        }
        for report in batch.reports where (report.detail?.utf8.count ?? 0) > FleetReport.maxDetailBytes {
            FuzzFinding.fail(name, "accepted a detail of \(report.detail?.utf8.count ?? 0) bytes")
        }
        let again: ReportBatch
        do {
            again = try ReportBatch.decode(batch.encoded())
        } catch {
            FuzzFinding.fail(name, "the encoding of an accepted batch is refused: \(error)")
        }
        guard again == batch else { FuzzFinding.fail(name, "decode → encode → decode changed the batch") }
    }
}

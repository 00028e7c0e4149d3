import ClientUpdater
import Foundation
import MeteorHotCodePush
import Synchronization
import TestSupport
import Testing

/// A Meteor update reports download progress through the same seam as the archive
/// channel (the progress bar of `install`, the `downloadProgress` event of `serve`).
@Suite struct MeteorProgressTests {
    final class Recorder: Sendable {
        private let _reports = Mutex<[(String, Int64, Int64?)]>([])
        func add(_ r: (String, Int64, Int64?)) { _reports.withLock { $0.append(r) } }
        var reports: [(String, Int64, Int64?)] { _reports.withLock { $0 } }
    }

    @Test(arguments: ScenarioSource.available)
    func updateReportsGrowingProgressUpToTheTotal(source: ScenarioSource) async throws {
        let h = try source.make().harness
        let recorder = Recorder()
        let outcome = try await h.check(serving: "version2", progress: { recorder.add(($0, $1, $2)) })
        guard case .installed = outcome else {
            Issue.record("expected installed, got \(outcome)")
            return
        }
        let reports = recorder.reports
        #expect(!reports.isEmpty)
        #expect(reports.allSatisfy { $0.0 == "version2" })
        let completed = reports.map(\.1)
        #expect(completed == completed.sorted(), "progress never goes back")
        let total = try #require(reports.last?.2)
        #expect(total > 0)
        #expect(completed.allSatisfy { $0 <= total })
    }
}

import FleetCollector
import FleetReports
import Foundation
import TestSupport
import Testing

/// `/metrics` as Prometheus reads it: checked by Prometheus' own `promtool check metrics`
/// (Debian's `prometheus` package), with labels of bounded cardinality.
@Suite struct CollectMetricsTests {
    typealias F = CollectorFixtures

    @Test func metricsPassPromtoolAndKeepVersionLabelsBounded() async throws {
        let dir = try TemporaryDirectory("collect")
        let collector = try await CollectProcess(database: "sqlite:" + dir("reports.db"), scratch: dir.path)
        // Seven versions tried in turn: only the five newest keep a label of their own.
        for minor in 0..<7 {
            let v = "1.\(minor).0"
            let batch = F.batch(
                device: 200 + minor,
                [
                    F.report(1, .trialStarted, at: 1_764_090_000, running: v, version: v),
                    F.report(2, .rolledBack, at: 1_764_090_010, running: "0.9.0", version: v, reason: .pageCrashed),
                    F.report(3, .webProcessDied, at: 1_764_090_020, running: v, reason: .outOfMemory),
                ])
            #expect(try await collector.post(batch.encoded()).status == 200)
        }
        // An old version after them counts as "other".
        let late = F.batch(device: 300, [F.report(1, .trialStarted, at: 1_764_090_000, running: "1.0.0", version: "1.0.0")])
        #expect(try await collector.post(late.encoded()).status == 200)
        #expect(try await collector.post(Data("{".utf8)).status == 400)
        let response = try await collector.read("metrics", token: collector.token)
        #expect(response.status == 200)
        #expect(response["content-type"]?.hasPrefix("text/plain; version=0.0.4") == true)
        let text = response.body
        try text.write(toFile: dir("metrics.txt"), atomically: true, encoding: .utf8)
        let check = try await Subprocess.run("/bin/sh", ["-c", "promtool check metrics < \"$0\"", dir("metrics.txt")])
        #expect(check.status == 0, "promtool: \(check.output) \(check.errorOutput)")
        #expect(text.contains("fleet_collector_reports_accepted_total 22"))
        #expect(text.contains("fleet_collector_batches_refused_total{reason=\"malformed\"} 1"))
        let trialLines = text.split(separator: "\n").filter { $0.hasPrefix("fleet_trials_total{") }
        let labels = Set(
            trialLines.compactMap { line -> String? in
                guard let start = line.range(of: "version=\"") else { return nil }
                return String(line[start.upperBound...].prefix { $0 != "\"" })
            })
        #expect(labels == ["1.2.0", "1.3.0", "1.4.0", "1.5.0", "1.6.0", "other"], "\(trialLines)")
        #expect(text.contains("fleet_rollbacks_total{app=\"\(F.app)\",channel=\"\(F.channel)\",version=\"1.6.0\",reason=\"page-crashed\"} 1"))
        #expect(
            text.contains("fleet_web_process_deaths_total{app=\"\(F.app)\",channel=\"\(F.channel)\",version=\"1.6.0\",reason=\"out-of-memory\"} 1"))
    }
}

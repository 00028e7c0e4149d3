import FleetCollector
import FleetReports
import Foundation
import TestSupport
import Testing

/// `GET /v1/fleet` of a real collector: the figures of a known set of batches.
@Suite struct CollectSummaryTests {
    typealias F = CollectorFixtures

    @Test func theSummaryCountsDistinctDevicesOfAKnownFleet() async throws {
        let dir = try TemporaryDirectory("collect")
        let collector = try await CollectProcess(database: "sqlite:" + dir("reports.db"), scratch: dir.path)
        let t = (Date().timeIntervalSince1970 - 3600).rounded(.down)
        let batches: [ReportBatch] = [
            // Device 1 finds 1.1.0 at 25 %, installs it, commits it in 800 ms.
            F.batch(
                device: 1,
                [
                    F.report(1, .start, at: t, running: "1.0.0"),
                    F.report(2, .updateFound, at: t + 10, running: "1.0.0", version: "1.1.0", rollout: RolloutSeen(percent: 25)),
                    F.report(3, .installed, at: t + 20, running: "1.0.0", version: "1.1.0"),
                    F.report(4, .trialStarted, at: t + 30, running: "1.1.0", version: "1.1.0"),
                    F.report(5, .committed, at: t + 31, running: "1.1.0", version: "1.1.0", ms: 800),
                ]),
            // Device 2's trial times out: rolled back and blacklisted.
            F.batch(
                device: 2,
                [
                    F.report(1, .start, at: t, running: "1.0.0"),
                    F.report(2, .trialStarted, at: t + 40, running: "1.1.0", version: "1.1.0"),
                    F.report(3, .rolledBack, at: t + 60, running: "1.0.0", version: "1.1.0", reason: .timedOut),
                    F.report(4, .blacklisted, at: t + 61, running: "1.0.0", version: "1.1.0", reason: .timedOut),
                ]),
            // Device 3 commits in 1200 ms, then its web process crashes on 1.1.0.
            F.batch(
                device: 3,
                [
                    F.report(1, .trialStarted, at: t + 50, running: "1.1.0", version: "1.1.0"),
                    F.report(2, .committed, at: t + 51, running: "1.1.0", version: "1.1.0", ms: 1200),
                    F.report(3, .webProcessDied, at: t + 70, running: "1.1.0", reason: .crashed),
                ]),
            // Device 3 sends its commit again (at-least-once): counted once.
            F.batch(device: 3, [F.report(2, .committed, at: t + 51, running: "1.1.0", version: "1.1.0", ms: 1200)]),
            // Device 4 was last heard two days ago.
            F.batch(device: 4, [F.report(1, .heartbeat, at: t - 2 * 86_400, running: "1.0.0")]),
        ]
        for batch in batches { #expect(try await collector.post(batch.encoded()).status == 200) }
        let response = try await collector.read("v1/fleet?app=\(F.app)&channel=\(F.channel)", token: collector.token)
        #expect(response.status == 200, "\(response.body)")
        let summary = try FleetSummary.decoder().decode(FleetSummary.self, from: response.data)
        #expect(summary.devices == 4)
        #expect(summary.windowSeconds == 86_400)
        #expect(summary.silentDevices == 1)
        #expect(summary.silent.map(\.device.text) == [F.device(4)])
        #expect(summary.versions.map(\.version) == ["1.1.0", "1.0.0"])
        let new = try #require(summary.versions.first)
        #expect(new.devicesNow == 2)
        #expect(new.installs == 1)
        #expect(new.trials == 3)
        #expect(new.commits == 2)
        #expect(new.rollbacks == ["timed-out": 1])
        #expect(new.blacklists == ["timed-out": 1])
        #expect(new.webProcessDeaths == ["crashed": 1])
        #expect(new.medianAckMs == 1000)
        #expect(new.failureRate == 1.0 / 3.0)
        #expect(new.rollout == RolloutSeen(percent: 25))
        let old = try #require(summary.versions.last)
        #expect(old.devicesNow == 1)
        #expect(old.trials == 0 && old.failureRate == nil)
        #expect(summary.rollouts == [RolloutPoint(time: Date(timeIntervalSince1970: t + 10), version: "1.1.0", rollout: RolloutSeen(percent: 25))])
        #expect(summary.timeline.count == FleetSummaryQuery.timelinePoints)
        #expect(summary.timeline.first?.devices == ["1.0.0": 1])
        #expect(summary.timeline.last?.devices == ["1.1.0": 2, "1.0.0": 1])
        // Another channel of the same app knows none of it.
        let other = try await collector.read("v1/fleet?app=\(F.app)&channel=beta", token: collector.token)
        #expect(try FleetSummary.decoder().decode(FleetSummary.self, from: other.data).devices == 0)
    }

    /// Apply policies seen from the fleet (docs/apply-policies.md#fleet): per version, the
    /// devices staged but not switched yet, and the time from staging to running of those
    /// that switched (median and p95, nearest rank), from their `switched` reports.
    @Test func stagedDevicesAndTheTimeFromStagedToRunning() async throws {
        let dir = try TemporaryDirectory("collect-staged")
        let collector = try await CollectProcess(database: "sqlite:" + dir("reports.db"), scratch: dir.path)
        let t = (Date().timeIntervalSince1970 - 3600).rounded(.down)
        var batches: [ReportBatch] = []
        for device in 1...20 {
            var reports = [F.report(1, .installed, at: t, running: "1.0.0", version: "1.1.0")]
            if device <= 15 {
                // Switched after `device` minutes: 1 … 15.
                reports.append(F.report(2, .switched, at: t + Double(device * 60), running: "1.1.0", version: "1.1.0", ms: Int64(device) * 60_000))
                reports.append(F.report(3, .trialStarted, at: t + Double(device * 60), running: "1.1.0", version: "1.1.0"))
            } else if device == 16 {
                // Rolled back without a trial report reaching us: not staged any more.
                reports.append(F.report(2, .rolledBack, at: t + 60, running: "1.0.0", version: "1.1.0", reason: .timedOut))
            }
            batches.append(F.batch(device: device, reports))
        }
        for batch in batches { #expect(try await collector.post(batch.encoded()).status == 200) }
        let response = try await collector.read("v1/fleet?app=\(F.app)&channel=\(F.channel)", token: collector.token)
        let summary = try FleetSummary.decoder().decode(FleetSummary.self, from: response.data)
        let v = try #require(summary.versions.first { $0.version == "1.1.0" })
        #expect(v.staged == 4, "devices 17 to 20 wait")
        #expect(v.stagedToRunningMedianMs == 8 * 60_000, "the 8th of 15")
        #expect(v.stagedToRunningP95Ms == 15 * 60_000, "the ⌈0.95 × 15⌉ = 15th")
        let old = try #require(summary.versions.first { $0.version == "1.0.0" })
        #expect(old.staged == 0 && old.stagedToRunningMedianMs == nil)
    }
}

import DeviceIdentity
import FleetReports
import Foundation

/// Summaries the page tests render: a day of a fleet moving from 1.0.0 to 1.1.0 while
/// 1.2.0 fails its trials, and the empty fleet.
enum FleetSamples {
    static let start = Date(timeIntervalSince1970: 1_764_028_800)  // 2025-11-25 00:00 UTC

    static func hour(_ h: Double) -> Date { start.addingTimeInterval(h * 3_600) }

    /// Ten devices; at hour 0 all on 1.0.0, at hour 24 six on 1.0.0 and four on 1.1.0.
    static func day() -> FleetSummary {
        var s = FleetSummary(app: "com.example.notes", channel: "stable", generated: hour(24), windowSeconds: 3_600)
        s.devices = 12
        s.silentDevices = 2
        s.silent = [
            SilentDevice(device: DeviceID("00000000000000000000000000000001") ?? .random(), lastSeen: hour(3), running: "1.0.0"),
            SilentDevice(device: DeviceID("00000000000000000000000000000002") ?? .random(), lastSeen: hour(5.5), running: "1.1.0"),
        ]
        var v120 = VersionSummary(version: "1.2.0")
        v120.installs = 5
        v120.trials = 5
        v120.commits = 1
        v120.rollbacks = ["timed-out": 3, "page-crashed": 1]
        v120.blacklists = ["timed-out": 3, "page-crashed": 1]
        v120.webProcessDeaths = ["crashed": 1]
        v120.failureRate = 0.8
        v120.medianAckMs = 2_300
        v120.staged = 3
        v120.stagedToRunningMedianMs = 5_400_000
        v120.stagedToRunningP95Ms = 90_000_000
        v120.rollout = RolloutSeen(percent: 10, paused: true)
        v120.downloadDeferrals = ["window": 3, "metered": 1]
        v120.downloadedBytes = 50_000_000
        v120.mirrorBytes = 45_000_000
        let v120Sums: [(errors: Int64, ms: Int64)] = [(errors: 30, ms: 3_600_000), (errors: 12, ms: 7_200_000)]
        v120.errors = ErrorFigures(devices: v120Sums)
        var v110 = VersionSummary(version: "1.1.0")
        v110.devicesNow = 4
        v110.installs = 5
        v110.trials = 5
        v110.commits = 4
        v110.rollbacks = ["timed-out": 1]
        v110.blacklists = ["timed-out": 1]
        v110.downloadFailures = ["network": 2]
        v110.refusals = ["rollout": 7]
        v110.failureRate = 0.2
        v110.medianAckMs = 840
        v110.staged = 0
        v110.stagedToRunningMedianMs = 42_000
        v110.stagedToRunningP95Ms = 3_600_000
        v110.rollout = RolloutSeen(percent: 100)
        v110.downloadDeferrals = [:]
        v110.downloadedBytes = 12_000_000
        v110.mirrorBytes = 0
        let v110Sums: [(errors: Int64, ms: Int64)] = [(errors: 1, ms: 7_200_000), (errors: 0, ms: 3_600_000)]
        v110.errors = ErrorFigures(devices: v110Sums)
        var v100 = VersionSummary(version: "1.0.0")
        v100.devicesNow = 6
        s.versions = [v120, v110, v100]
        s.timeline = (0...24).map { h in
            let moved = min(4, max(0, (h - 4) / 3))
            return TimelinePoint(time: hour(Double(h)), devices: moved > 0 ? ["1.0.0": 10 - moved, "1.1.0": moved] : ["1.0.0": 10])
        }
        s.rollouts = [
            RolloutPoint(time: hour(2), version: "1.1.0", rollout: RolloutSeen(percent: 5)),
            RolloutPoint(time: hour(6), version: "1.1.0", rollout: RolloutSeen(percent: 25)),
            RolloutPoint(time: hour(10), version: "1.1.0", rollout: RolloutSeen(percent: 25, paused: true)),
            RolloutPoint(time: hour(13), version: "1.1.0", rollout: RolloutSeen(percent: 50)),
            RolloutPoint(time: hour(16), version: "1.1.0", rollout: RolloutSeen(percent: 100)),
            RolloutPoint(time: hour(18), version: "1.2.0", rollout: RolloutSeen(percent: 10)),
            RolloutPoint(time: hour(21), version: "1.2.0", rollout: RolloutSeen(percent: 10, paused: true)),
        ]
        return s
    }

    static func empty() -> FleetSummary {
        FleetSummary(app: "com.example.notes", channel: "beta", generated: hour(24), windowSeconds: 86_400)
    }
}

import DeviceIdentity
import FleetReports
import Foundation

/// A fleet's batches made up for the store tests: every device starts on 1.0.0, sees 1.1.0
/// under a rollout, downloads, installs and tries it, then commits it or rolls it back
/// (and blacklists it) for a reason; some lose a web process, some refuse a check, some
/// fail a download. Deterministic: the same arguments give the same batches.
enum SyntheticFleet {
    static let app = "com.example.notes"
    static let channel = "stable"
    static let start = Date(timeIntervalSince1970: 1_764_000_000)

    /// The device id of device `n`: 32 lowercase hex digits.
    static func device(_ n: Int) -> String {
        let hex = String(n, radix: 16)
        return String(repeating: "0", count: 32 - hex.count) + hex
    }

    /// The id of device `n` as a batch carries it.
    static func deviceID(_ n: Int) -> DeviceID {
        guard let id = DeviceID(device(n)) else { preconditionFailure("\(device(n)) is not a device id") }
        return id
    }

    /// Every device's reports, `perBatch` reports a batch, in the order a device sends them.
    static func batches(devices: Int, perBatch: Int = 4) -> [ReportBatch] {
        (0..<devices).flatMap { n -> [ReportBatch] in
            let reports = self.reports(n)
            return stride(from: 0, to: reports.count, by: perBatch).map { i in
                ReportBatch(device: deviceID(n), app: app, channel: channel, reports: Array(reports[i..<min(i + perBatch, reports.count)]))
            }
        }
    }

    /// The reports of device `n` (seq from 1).
    static func reports(_ n: Int) -> [FleetReport] {
        var out: [FleetReport] = []
        var clock = start.addingTimeInterval(Double(n * 37))
        func add(_ type: ReportKind, running: String, _ change: (inout FleetReport) -> Void = { _ in }) {
            clock = clock.addingTimeInterval(Double(60 + (n * 13) % 600))
            var r = FleetReport(seq: Int64(out.count + 1), time: clock, type: type, running: running)
            r.shell = "1.0.0"
            change(&r)
            out.append(r)
        }
        let percent = [10, 25, 50, 100][n % 4]
        add(.start, running: "1.0.0")
        if n % 11 == 3 {
            add(.checkRefused, running: "1.0.0") {
                $0.version = "1.1.0"
                $0.reason = .rollout
                $0.rollout = RolloutSeen(percent: percent, paused: n % 2 == 0)
            }
            add(.heartbeat, running: "1.0.0")
            return out
        }
        add(.updateFound, running: "1.0.0") {
            $0.version = "1.1.0"
            $0.rollout = RolloutSeen(percent: percent)
        }
        if n % 9 == 4 {
            add(.downloadFailed, running: "1.0.0") {
                $0.version = "1.1.0"
                $0.reason = n % 2 == 0 ? .network : .hashMismatch
                $0.detail = "attempt \(n % 3)"
            }
        }
        add(.downloaded, running: "1.0.0") {
            $0.version = "1.1.0"
            $0.via = n % 3 == 0 ? .patch : .archive
            $0.bytes = Int64(100_000 + n * 17)
            $0.ms = Int64(200 + n % 900)
        }
        add(.installed, running: "1.0.0") { $0.version = "1.1.0" }
        if n % 13 == 6 {
            // Staged: its apply policy waits (a window, a lease).
            add(.heartbeat, running: "1.0.0")
            return out
        }
        add(.switched, running: "1.1.0") {
            $0.version = "1.1.0"
            $0.from = "1.0.0"
            $0.detail = n % 2 == 0 ? "window" : "idle"
            $0.ms = Int64((n * 37) % 5_000) * 1_000
        }
        add(.trialStarted, running: "1.1.0") { $0.version = "1.1.0" }
        if n % 5 == 2 {
            add(.rolledBack, running: "1.0.0") {
                $0.version = "1.1.0"
                $0.reason = n % 2 == 0 ? .timedOut : .pageCrashed
            }
            add(.blacklisted, running: "1.0.0") {
                $0.version = "1.1.0"
                $0.reason = n % 2 == 0 ? .timedOut : .pageCrashed
            }
        } else {
            add(.committed, running: "1.1.0") {
                $0.version = "1.1.0"
                $0.ms = Int64(300 + (n * 29) % 2000)
            }
            if n % 7 == 1 { add(.webProcessDied, running: "1.1.0") { $0.reason = n % 2 == 0 ? .crashed : .killed } }
        }
        if n % 4 != 0 { add(.heartbeat, running: out.last?.running ?? "1.0.0") }
        return out
    }

    /// When the last report of a fleet of `devices` was made (a `now` that sees every device).
    static func end(devices: Int) -> Date {
        (0..<devices).compactMap { reports($0).last?.time }.max() ?? start
    }
}

import ClientFoundation
import FleetReports
import Foundation

/// Builds a ``FleetSummary`` from the shared SQL (docs/fleet-reports.md#the-fleet-summary):
/// every count is of distinct devices, a few small queries whose rows are assembled here, so
/// SQLite and PostgreSQL answer alike.
public enum FleetSummaryQuery {
    /// Points of the adoption timeline over the data's time span.
    public static let timelinePoints = 48
    /// The most silent devices listed.
    public static let silentListed = 100

    /// The version a report counts for: the page on screen for a web-process death, else `version`.
    static let subject = "CASE WHEN type = 'web-process-died' THEN running ELSE version END"

    static let deviceCount = "SELECT COUNT(*) FROM devices WHERE app = ? AND channel = ?"
    static let devicesNow = "SELECT running, COUNT(*) FROM devices WHERE app = ? AND channel = ? AND last_ms >= ? GROUP BY running"
    static let silentCount = "SELECT COUNT(*) FROM devices WHERE app = ? AND channel = ? AND last_ms < ?"
    static let silentList = """
        SELECT device, last_ms, running FROM devices WHERE app = ? AND channel = ? AND last_ms < ?
        ORDER BY last_ms, device LIMIT \(silentListed)
        """
    static let versions = """
        SELECT version FROM reports WHERE app = ? AND channel = ? AND version IS NOT NULL
        UNION SELECT running FROM reports WHERE app = ? AND channel = ?
        """
    static let counts = """
        SELECT \(subject), type, COUNT(DISTINCT device) FROM reports
        WHERE app = ? AND channel = ? AND type IN ('installed', 'trial-started', 'committed', 'rolled-back')
        GROUP BY 1, 2
        """
    static let reasons = """
        SELECT \(subject), type, reason, COUNT(DISTINCT device) FROM reports
        WHERE app = ? AND channel = ? AND reason IS NOT NULL
          AND type IN ('rolled-back', 'blacklisted', 'web-process-died', 'download-failed', 'check-refused')
        GROUP BY 1, 2, 3
        """
    static let ackTimes = """
        SELECT version, ms FROM reports
        WHERE app = ? AND channel = ? AND type = 'committed' AND version IS NOT NULL AND ms IS NOT NULL
        ORDER BY 1, 2
        """
    static let rollouts = """
        SELECT version, rollout_percent, rollout_paused, MIN(time_ms), MAX(time_ms) FROM reports
        WHERE app = ? AND channel = ? AND version IS NOT NULL AND rollout_percent IS NOT NULL
        GROUP BY 1, 2, 3 ORDER BY 4, 1
        """
    static let span = "SELECT MIN(time_ms), MAX(time_ms) FROM reports WHERE app = ? AND channel = ?"
    /// Devices by the version of their last report in (`?` − window, `?`].
    static let timelineAt = """
        SELECT running, COUNT(*) FROM (
            SELECT running, ROW_NUMBER() OVER (PARTITION BY device ORDER BY time_ms DESC, seq DESC) AS rn
            FROM reports WHERE app = ? AND channel = ? AND time_ms <= ? AND time_ms > ?) latest
        WHERE rn = 1 GROUP BY running
        """

    /// The summary of `app`/`channel` as of `now`.
    public static func summary(
        on db: some SQLQuerying, app: String, channel: String, windowSeconds: Int, now: Date
    ) async throws -> FleetSummary {
        var summary = FleetSummary(app: app, channel: channel, generated: now, windowSeconds: windowSeconds)
        let key: [SQLValue] = [.text(app), .text(channel)]
        let windowMs = Int64(windowSeconds) * 1000
        let since = ReportSQL.millis(now) - windowMs
        summary.devices = Int(try await db.query(deviceCount, key).first?.first?.integer ?? 0)
        summary.silentDevices = Int(try await db.query(silentCount, key + [.integer(since)]).first?.first?.integer ?? 0)
        summary.silent = try await db.query(silentList, key + [.integer(since)]).compactMap { row in
            guard row.count == 3, let device = row[0].text, let last = row[1].integer, let running = row[2].text else { return nil }
            return SilentDevice(device: device, lastSeen: date(last), running: running)
        }
        var byVersion: [String: VersionSummary] = [:]
        func update(_ version: String, _ change: (inout VersionSummary) -> Void) {
            var entry = byVersion[version] ?? VersionSummary(version: version)
            change(&entry)
            byVersion[version] = entry
        }
        for row in try await db.query(versions, key + key) {
            if let v = row.first?.text { update(v) { _ in } }
        }
        for row in try await db.query(devicesNow, key + [.integer(since)]) {
            guard row.count == 2, let v = row[0].text, let n = row[1].integer else { continue }
            update(v) { $0.devicesNow = Int(n) }
        }
        var rolledBack: [String: Int] = [:]
        for row in try await db.query(counts, key) {
            guard row.count == 3, let v = row[0].text, let type = row[1].text, let n = row[2].integer.map(Int.init) else { continue }
            switch ReportKind(rawValue: type) {
            case .installed: update(v) { $0.installs = n }
            case .trialStarted: update(v) { $0.trials = n }
            case .committed: update(v) { $0.commits = n }
            case .rolledBack: rolledBack[v] = n
            default: break
            }
        }
        for row in try await db.query(reasons, key) {
            guard row.count == 4, let v = row[0].text, let type = row[1].text, let reason = row[2].text,
                let n = row[3].integer.map(Int.init)
            else { continue }
            switch ReportKind(rawValue: type) {
            case .rolledBack: update(v) { $0.rollbacks[reason] = n }
            case .blacklisted: update(v) { $0.blacklists[reason] = n }
            case .webProcessDied: update(v) { $0.webProcessDeaths[reason] = n }
            case .downloadFailed: update(v) { $0.downloadFailures[reason] = n }
            case .checkRefused: update(v) { $0.refusals[reason] = n }
            default: break
            }
        }
        var acks: [String: [Int64]] = [:]
        for row in try await db.query(ackTimes, key) {
            guard row.count == 2, let v = row[0].text, let ms = row[1].integer else { continue }
            acks[v, default: []].append(ms)
        }
        for (v, times) in acks { update(v) { $0.medianAckMs = median(times) } }
        for (v, entry) in byVersion where entry.trials > 0 {
            let failed = rolledBack[v] ?? 0
            update(v) { $0.failureRate = Double(failed) / Double(entry.trials) }
        }
        var lastSeen: [String: Int64] = [:]
        for row in try await db.query(rollouts, key) {
            guard row.count == 5, let v = row[0].text, let percent = row[1].integer, let paused = row[2].integer,
                let first = row[3].integer, let last = row[4].integer
            else { continue }
            let seen = RolloutSeen(percent: Int(percent), paused: paused != 0)
            summary.rollouts.append(RolloutPoint(time: date(first), version: v, rollout: seen))
            if last >= lastSeen[v] ?? .min {
                lastSeen[v] = last
                update(v) { $0.rollout = seen }
            }
        }
        summary.versions = byVersion.values.sorted { newer($0.version, than: $1.version) }
        summary.timeline = try await timeline(on: db, key: key, windowMs: windowMs)
        return summary
    }

    /// Devices per version at ``timelinePoints`` evenly spaced times over the data's span.
    static func timeline(on db: some SQLQuerying, key: [SQLValue], windowMs: Int64) async throws -> [TimelinePoint] {
        guard let row = try await db.query(span, key).first, row.count == 2, let first = row[0].integer, let last = row[1].integer
        else { return [] }
        let steps = last > first ? timelinePoints : 1
        var points: [TimelinePoint] = []
        for i in 0..<steps {
            let t = steps == 1 ? last : first + (last - first) * Int64(i) / Int64(steps - 1)
            var devices: [String: Int] = [:]
            for r in try await db.query(timelineAt, key + [.integer(t), .integer(t - windowMs)]) {
                guard r.count == 2, let v = r[0].text, let n = r[1].integer else { continue }
                devices[v] = Int(n)
            }
            points.append(TimelinePoint(time: date(t), devices: devices))
        }
        return points
    }

    /// The median of sorted values (the lower middle's and upper middle's mean, rounded down, for an even count).
    static func median(_ sorted: [Int64]) -> Int? {
        guard !sorted.isEmpty else { return nil }
        let mid = sorted.count / 2
        return sorted.count % 2 == 1 ? Int(sorted[mid]) : Int((sorted[mid - 1] + sorted[mid]) / 2)
    }

    /// Newest SemVer first; other ids (embedded seeds) after, by name.
    static func newer(_ a: String, than b: String) -> Bool {
        switch (Version(a), Version(b)) {
        case (let x?, let y?): return x != y ? x > y : a < b
        case (.some, nil): return true
        case (nil, .some): return false
        case (nil, nil): return a < b
        }
    }

    static func date(_ ms: Int64) -> Date { Date(timeIntervalSince1970: Double(ms) / 1000) }
}

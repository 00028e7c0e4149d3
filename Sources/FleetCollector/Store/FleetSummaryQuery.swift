import ClientFoundation
import DeviceIdentity
import FleetReports
import Foundation

/// Builds a ``FleetSummary`` from the shared SQL (docs/fleet-reports.md#the-fleet-summary):
/// every count is of distinct devices, a few small queries whose rows are assembled here, so
/// SQLite and PostgreSQL answer alike.
///
/// **Bounded whatever devices send.** Every query returns a bounded number of rows (but the
/// errors' two: a row per device of the versions, each device's sums, which `ErrorFigures`
/// reduces to one fixed-size figure) and the answer a bounded size: at most ``listedVersions`` versions by rank (plus at most
/// ``maxAskedVersions`` asked for by name), the rest folded into one `other` entry; at most
/// ``rolloutPointsPerVersion`` rollout points per listed version; the timeline's versions are
/// the listed ones and ``FleetSummary/otherKey``; at most ``silentListed`` silent devices.
///
/// **The same answer on any collation.** No result depends on how the database orders text:
/// the rank is numeric (a tie that does not fit is folded whole), rows are ordered by
/// numbers and device ids (lowercase hex, which every collation orders alike), and lists
/// are sorted here, by SemVer or byte by byte.
public enum FleetSummaryQuery {
    /// Points of the adoption timeline over the data's time span.
    public static let timelinePoints = 48
    /// The most silent devices listed.
    public static let silentListed = 100
    /// The most versions listed by rank: devices on it now, then devices that tried it, then
    /// devices that installed it, then its latest report's time, most first.
    public static let listedVersions = 20
    /// The most versions a request may ask for by name (`GET /v1/fleet?version=…`).
    public static let maxAskedVersions = 5
    /// The most rollout points per listed version (the latest changes).
    public static let rolloutPointsPerVersion = 32

    /// The version a report counts for: the page on screen for a web-process death, else `version`.
    static let subject = "CASE WHEN type = 'web-process-died' THEN running ELSE version END"

    /// Types whose devices count per version.
    static let countedTypes = "('installed', 'trial-started', 'committed', 'rolled-back')"
    /// Types counted by reason.
    static let reasonTypes = "('rolled-back', 'blacklisted', 'web-process-died', 'download-failed', 'check-refused', 'download-deferred')"
    /// Installs, trials (a trial started, or a rollback whose start was lost), commits, rollbacks: distinct devices.
    static let figures = """
        COUNT(DISTINCT CASE WHEN type = 'installed' THEN device END),
        COUNT(DISTINCT CASE WHEN type IN ('trial-started', 'rolled-back') THEN device END),
        COUNT(DISTINCT CASE WHEN type = 'committed' THEN device END),
        COUNT(DISTINCT CASE WHEN type = 'rolled-back' THEN device END)
        """

    static func deviceCount(_ s: Scope) -> String { "SELECT COUNT(*) FROM devices WHERE \(s.sql())" }
    static func silentCount(_ s: Scope) -> String { "SELECT COUNT(*) FROM devices WHERE \(s.sql()) AND last_ms < ?" }
    static func silentList(_ s: Scope) -> String {
        """
        SELECT device, last_ms, running FROM devices WHERE \(s.sql()) AND last_ms < ?
        ORDER BY last_ms, device LIMIT \(silentListed)
        """
    }
    /// Every version a report names (as `version` or `running`), each with the devices it
    /// counts for; arguments: app, channel, app, channel.
    static func named(_ s: Scope) -> String {
        """
        SELECT version AS v, type, device, time_ms FROM reports WHERE \(s.sql()) AND version IS NOT NULL
        UNION ALL SELECT running, 'running', device, time_ms FROM reports WHERE \(s.sql())
        """
    }
    /// The versions by rank, at most `?` of them; arguments: app, channel, since, app,
    /// channel, app, channel, limit. Columns: version, devices now, trials, installs, latest time.
    static func ranked(_ s: Scope) -> String {
        """
        SELECT v, MAX(now_devices), MAX(trials), MAX(installs), MAX(seen) FROM (
            SELECT running AS v, COUNT(*) AS now_devices, 0 AS trials, 0 AS installs, 0 AS seen
            FROM devices WHERE \(s.sql()) AND last_ms >= ? GROUP BY running
            UNION ALL
            SELECT v, 0, COUNT(DISTINCT CASE WHEN type IN ('trial-started', 'rolled-back') THEN device END),
                COUNT(DISTINCT CASE WHEN type = 'installed' THEN device END), MAX(time_ms)
            FROM (\(named(s))) named GROUP BY v) figures
        GROUP BY v ORDER BY 2 DESC, 3 DESC, 4 DESC, 5 DESC LIMIT ?
        """
    }
    /// How many versions reports name; arguments: app, channel, app, channel.
    static func versionCount(_ s: Scope) -> String { "SELECT COUNT(DISTINCT v) FROM (\(named(s))) named" }
    static func span(_ s: Scope) -> String { "SELECT MIN(time_ms), MAX(time_ms) FROM reports WHERE \(s.sql())" }

    /// `expression IN (?, …)` for `count` values (`1 = 0` for none), or `NOT IN` (`1 = 1`).
    static func member(_ expression: String, _ count: Int, not: Bool = false) -> String {
        guard count > 0 else { return not ? "1 = 1" : "1 = 0" }
        return expression + (not ? " NOT IN (" : " IN (") + Array(repeating: "?", count: count).joined(separator: ", ") + ")"
    }

    /// Which of `asked` a report names; arguments: app, channel, asked, app, channel, asked.
    static func existing(_ n: Int, _ s: Scope) -> String {
        """
        SELECT version FROM reports WHERE \(s.sql()) AND \(member("version", n))
        UNION SELECT running FROM reports WHERE \(s.sql()) AND \(member("running", n))
        """
    }

    /// Devices now per listed version, the rest as NULL; arguments: listed, app, channel, since.
    static func devicesNow(_ n: Int, _ s: Scope) -> String {
        """
        SELECT CASE WHEN \(member("running", n)) THEN running END, COUNT(*) FROM devices
        WHERE \(s.sql()) AND last_ms >= ? GROUP BY 1
        """
    }

    /// ``figures`` per listed version; arguments: app, channel, listed.
    static func counts(_ n: Int, _ s: Scope) -> String {
        """
        SELECT version, \(figures) FROM reports
        WHERE \(s.sql()) AND type IN \(countedTypes) AND \(member("version", n)) GROUP BY version
        """
    }

    /// ``figures`` over every version not listed; arguments: app, channel, listed.
    static func otherCounts(_ n: Int, _ s: Scope) -> String {
        """
        SELECT \(figures) FROM reports
        WHERE \(s.sql()) AND type IN \(countedTypes) AND version IS NOT NULL AND \(member("version", n, not: true))
        """
    }

    /// Devices by version, type and reason; arguments: app, channel, listed.
    static func reasons(_ n: Int, _ s: Scope) -> String {
        """
        SELECT \(subject), type, reason, COUNT(DISTINCT device) FROM reports
        WHERE \(s.sql()) AND reason IS NOT NULL AND type IN \(reasonTypes) AND \(member(subject, n))
        GROUP BY 1, 2, 3
        """
    }

    /// Devices by type and reason over every version not listed; arguments: app, channel, listed.
    static func otherReasons(_ n: Int, _ s: Scope) -> String {
        """
        SELECT type, reason, COUNT(DISTINCT device) FROM reports
        WHERE \(s.sql()) AND reason IS NOT NULL AND type IN \(reasonTypes)
          AND \(subject) IS NOT NULL AND \(member(subject, n, not: true))
        GROUP BY 1, 2
        """
    }

    /// The bytes of each listed version's `downloaded` reports, and of them the bytes from
    /// site mirrors; arguments: app, channel, listed.
    static func downloadedBytes(_ n: Int, _ s: Scope) -> String {
        """
        SELECT version, CAST(COALESCE(SUM(bytes), 0) AS BIGINT), CAST(COALESCE(SUM(mirror_bytes), 0) AS BIGINT) FROM reports
        WHERE \(s.sql()) AND type = 'downloaded' AND \(member("version", n)) GROUP BY version
        """
    }

    /// The version a `page-errors` report counts for: its `version` (the page on screen, which
    /// it names), else what it ran.
    static let errorSubject = "COALESCE(version, running)"

    /// The most problems, and the most milliseconds of use, one `page-errors` report counts
    /// for: far more than one period of use holds, and small enough that no device's sums
    /// overflow however many reports it sends.
    static let maxReportFigure: Int64 = 1_000_000_000

    /// A device's problems (an absent `count`: none) and milliseconds of use over its
    /// `page-errors` reports, each report's figures at most ``maxReportFigure``; the columns
    /// named with `prefix` (`""`, `"r."`).
    static func errorSums(_ prefix: String = "") -> String {
        let cap = maxReportFigure
        return """
            CAST(SUM(CASE WHEN \(prefix)count IS NULL THEN 0 WHEN \(prefix)count > \(cap) THEN \(cap) ELSE \(prefix)count END) AS BIGINT),
            CAST(SUM(CASE WHEN \(prefix)ms IS NULL THEN 0 WHEN \(prefix)ms > \(cap) THEN \(cap) ELSE \(prefix)ms END) AS BIGINT)
            """
    }

    /// Each device's ``errorSums(_:)`` per listed version, over the `page-errors` reports of
    /// the window; arguments: app, channel, since, listed. Ordered by device within a version,
    /// so every database gives the figures in the same order (and the same sums).
    static func errorDevices(_ n: Int, _ s: Scope) -> String {
        """
        SELECT \(errorSubject), device, \(errorSums()) FROM reports
        WHERE \(s.sql()) AND type = 'page-errors' AND time_ms >= ? AND \(member(errorSubject, n)) GROUP BY 1, 2 ORDER BY 1, 2
        """
    }

    /// Each device's ``errorSums(_:)`` over every version not listed; arguments: app, channel,
    /// since, listed.
    static func otherErrorDevices(_ n: Int, _ s: Scope) -> String {
        """
        SELECT device, \(errorSums()) FROM reports
        WHERE \(s.sql()) AND type = 'page-errors' AND time_ms >= ? AND \(member(errorSubject, n, not: true))
        GROUP BY device ORDER BY device
        """
    }

    /// A device's sums from two columns of ``errorSums(_:)``.
    static func errorSum(_ columns: ArraySlice<SQLValue>) -> (errors: Int64, ms: Int64)? {
        guard columns.count == 2, let errors = columns.first?.integer, let ms = columns.last?.integer else { return nil }
        return (errors, ms)
    }

    /// Commits with a time per listed version; arguments: app, channel, listed.
    static func ackCounts(_ n: Int, _ s: Scope) -> String {
        """
        SELECT version, COUNT(*) FROM reports
        WHERE \(s.sql()) AND type = 'committed' AND ms IS NOT NULL AND \(member("version", n)) GROUP BY version
        """
    }

    /// Devices that installed a listed version and have not started a trial of it, switched to
    /// it, rolled it back or blacklisted it since: staged, waiting for the apply policy;
    /// arguments: app, channel, listed, app, channel.
    static func stagedCounts(_ n: Int, _ s: Scope) -> String {
        """
        SELECT i.version, COUNT(DISTINCT i.device) FROM reports i
        WHERE \(s.sql("i.")) AND i.type = 'installed' AND \(member("i.version", n)) AND NOT EXISTS (
            SELECT 1 FROM reports r WHERE \(s.sql("r.")) AND r.device = i.device AND r.version = i.version
                AND r.type IN ('switched', 'trial-started', 'rolled-back', 'blacklisted'))
        GROUP BY i.version
        """
    }

    /// How many `switched` reports of each listed version carry the time since staging;
    /// arguments: app, channel, listed.
    static func switchCounts(_ n: Int, _ s: Scope) -> String {
        """
        SELECT version, COUNT(*) FROM reports
        WHERE \(s.sql()) AND type = 'switched' AND ms IS NOT NULL AND \(member("version", n)) GROUP BY version
        """
    }

    /// One time since staging of a version by rank; arguments: app, channel, version, offset.
    static func switchAt(_ s: Scope) -> String {
        """
        SELECT ms FROM reports WHERE \(s.sql()) AND type = 'switched' AND ms IS NOT NULL AND version = ?
        ORDER BY ms LIMIT 1 OFFSET ?
        """
    }

    /// The middle one or two commit times of a version; arguments: app, channel, version, limit, offset.
    static func ackMiddle(_ s: Scope) -> String {
        """
        SELECT ms FROM reports WHERE \(s.sql()) AND type = 'committed' AND ms IS NOT NULL AND version = ?
        ORDER BY ms LIMIT ? OFFSET ?
        """
    }

    /// The rollout changes of the listed versions in time order (a report whose percent or
    /// pause differs from the one before it), the latest `?` per version; arguments: app,
    /// channel, listed, limit. Ties in time are ordered by device and seq, so the rows are
    /// the same on every database.
    static func rollouts(_ n: Int, _ s: Scope) -> String {
        """
        SELECT version, rollout_percent, rollout_paused, time_ms, rn FROM (
            SELECT version, rollout_percent, rollout_paused, time_ms,
                ROW_NUMBER() OVER (PARTITION BY version ORDER BY time_ms DESC, device DESC, seq DESC) AS rn
            FROM (
                SELECT version, rollout_percent, rollout_paused, time_ms, device, seq,
                    LAG(rollout_percent) OVER (PARTITION BY version ORDER BY time_ms, device, seq) AS before_percent,
                    LAG(rollout_paused) OVER (PARTITION BY version ORDER BY time_ms, device, seq) AS before_paused
                FROM reports
                WHERE \(s.sql()) AND rollout_percent IS NOT NULL AND \(member("version", n))) seen
            WHERE before_percent IS NULL OR before_percent <> rollout_percent OR before_paused <> rollout_paused) changes
        WHERE rn <= ?
        """
    }

    /// Devices by the version of their last report in (`?` − window, `?`], versions not
    /// listed as NULL; arguments: listed, app, channel, time, time − window.
    static func timelineAt(_ n: Int, _ s: Scope) -> String {
        """
        SELECT CASE WHEN \(member("running", n)) THEN running END, COUNT(*) FROM (
            SELECT running, ROW_NUMBER() OVER (PARTITION BY device ORDER BY time_ms DESC, seq DESC) AS rn
            FROM reports WHERE \(s.sql()) AND time_ms <= ? AND time_ms > ?) latest
        WHERE rn = 1 GROUP BY 1
        """
    }

    /// The summary of `app`/`channel` as of `now`.
    /// - Parameters:
    ///   - versions: versions to list whatever their rank (at most ``maxAskedVersions``;
    ///     those no report names are left out).
    ///   - labels: only devices whose latest labels include these count (empty: every device).
    public static func summary(
        on db: some SQLQuerying, app: String, channel: String, windowSeconds: Int, now: Date, versions asked: [String] = [],
        labels: LabelFilter = LabelFilter()
    ) async throws -> FleetSummary {
        var summary = FleetSummary(app: app, channel: channel, generated: now, windowSeconds: windowSeconds)
        if !labels.isEmpty { summary.labels = labels.labels }
        let s = Scope(app: app, channel: channel, labels: labels)
        let key = s.arguments
        let windowMs = Int64(windowSeconds) * 1000
        let since = ReportSQL.millis(now) - windowMs
        summary.devices = Int(try await db.query(deviceCount(s), key).first?.first?.integer ?? 0)
        summary.silentDevices = Int(try await db.query(silentCount(s), key + [.integer(since)]).first?.first?.integer ?? 0)
        summary.silent = try await db.query(silentList(s), key + [.integer(since)]).compactMap { row in
            guard row.count == 3, let device = row[0].text.flatMap(DeviceID.init), let last = row[1].integer, let running = row[2].text else {
                return nil
            }
            return SilentDevice(device: device, lastSeen: date(last), running: running)
        }
        var unique: [String] = []
        for v in asked where !unique.contains(v) && unique.count < maxAskedVersions { unique.append(v) }
        let listed = try await listedVersions(on: db, s, since: since, asked: unique)
        let names: [SQLValue] = listed.map { .text($0) }
        var byVersion: [String: VersionSummary] = [:]
        for v in listed { byVersion[v] = VersionSummary(version: v) }
        func update(_ version: String, _ change: (inout VersionSummary) -> Void) {
            guard var entry = byVersion[version] else { return }
            change(&entry)
            byVersion[version] = entry
        }
        var other = VersionSummary(version: FleetSummary.otherKey)
        for row in try await db.query(devicesNow(listed.count, s), names + key + [.integer(since)]) {
            guard row.count == 2, let n = row[1].integer.map(Int.init) else { continue }
            if let v = row[0].text { update(v) { $0.devicesNow = n } } else { other.devicesNow = n }
        }
        for row in try await db.query(counts(listed.count, s), key + names) {
            guard row.count == 5, let v = row[0].text else { continue }
            update(v) { apply(row[1...], to: &$0) }
        }
        for row in try await db.query(reasons(listed.count, s), key + names) {
            guard row.count == 4, let v = row[0].text, let type = row[1].text, let reason = row[2].text, let n = row[3].integer.map(Int.init)
            else { continue }
            update(v) { record(type, reason, n, in: &$0) }
        }
        for row in try await db.query(ackCounts(listed.count, s), key + names) {
            guard row.count == 2, let v = row[0].text, let n = row[1].integer, n > 0 else { continue }
            let middle = try await db.query(ackMiddle(s), key + [.text(v), .integer(n % 2 == 1 ? 1 : 2), .integer((n - 1) / 2)])
            let times = middle.compactMap { $0.first?.integer }
            update(v) { $0.medianAckMs = median(times) }
        }
        for row in try await db.query(stagedCounts(listed.count, s), key + names + key) {
            guard row.count == 2, let v = row[0].text, let n = row[1].integer.map(Int.init) else { continue }
            update(v) { $0.staged = n }
        }
        for v in listed {
            update(v) {
                $0.staged = $0.staged ?? 0
                $0.downloadDeferrals = $0.downloadDeferrals ?? [:]
            }
        }
        for row in try await db.query(downloadedBytes(listed.count, s), key + names) {
            guard row.count == 3, let v = row[0].text, let bytes = row[1].integer, let mirrored = row[2].integer else { continue }
            update(v) {
                $0.downloadedBytes = bytes
                $0.mirrorBytes = mirrored
            }
        }
        for row in try await db.query(switchCounts(listed.count, s), key + names) {
            guard row.count == 2, let v = row[0].text, let n = row[1].integer, n > 0 else { continue }
            // The nearest-rank percentiles: the median of the middle one or two, p95 the ⌈0.95 n⌉-th.
            var middle: [Int64] = []
            for offset in Set([(n - 1) / 2, n / 2]).sorted() {
                if let ms = try await db.query(switchAt(s), key + [.text(v), .integer(offset)]).first?.first?.integer { middle.append(ms) }
            }
            let rank = Int64((Double(n) * 0.95).rounded(.up)) - 1
            let p95 = try await db.query(switchAt(s), key + [.text(v), .integer(max(0, rank))]).first?.first?.integer
            update(v) {
                $0.stagedToRunningMedianMs = median(middle)
                $0.stagedToRunningP95Ms = p95.map(Int.init)
            }
        }
        // Every listed version has its errors (none reported: no devices, no hours), so nil
        // says the collector is from before `page-errors`.
        var errorsByVersion: [String: [(errors: Int64, ms: Int64)]] = [:]
        for row in try await db.query(errorDevices(listed.count, s), key + [.integer(since)] + names) {
            guard row.count == 4, let v = row[0].text, let sum = errorSum(row[2...]) else { continue }
            errorsByVersion[v, default: []].append(sum)
        }
        // No device used a version longer than the window holds: each one's use counts for
        // at most the window, so one that claims more cannot thin out the others' problems.
        for v in listed { update(v) { $0.errors = ErrorFigures(devices: errorsByVersion[v] ?? [], maxDeviceMs: windowMs) } }
        var points: [(ms: Int64, point: RolloutPoint)] = []
        for row in try await db.query(rollouts(listed.count, s), key + names + [.integer(Int64(rolloutPointsPerVersion))]) {
            guard row.count == 5, let v = row[0].text, let percent = row[1].integer, let paused = row[2].integer, let ms = row[3].integer,
                let rank = row[4].integer
            else { continue }
            let seen = RolloutSeen(percent: Int(percent), paused: paused != 0)
            points.append((ms, RolloutPoint(time: date(ms), version: v, rollout: seen)))
            if rank == 1 { update(v) { $0.rollout = seen } }
        }
        summary.rollouts = points.sorted { a, b in
            if a.ms != b.ms { return a.ms < b.ms }
            if a.point.version != b.point.version { return bytewise(a.point.version, b.point.version) }
            return (a.point.rollout.percent, a.point.rollout.paused ? 1 : 0) < (b.point.rollout.percent, b.point.rollout.paused ? 1 : 0)
        }.map(\.point)
        summary.versions = byVersion.values.sorted { newer($0.version, than: $1.version) }
        let folded = max(0, Int(try await db.query(versionCount(s), key + key).first?.first?.integer ?? 0) - listed.count)
        if folded > 0 {
            if let row = try await db.query(otherCounts(listed.count, s), key + names).first, row.count == 4 { apply(row[...], to: &other) }
            for row in try await db.query(otherReasons(listed.count, s), key + names) {
                guard row.count == 3, let type = row[0].text, let reason = row[1].text, let n = row[2].integer.map(Int.init) else { continue }
                record(type, reason, n, in: &other)
            }
            // The folded versions' errors: each device's sums over all of them together.
            let sums = try await db.query(otherErrorDevices(listed.count, s), key + [.integer(since)] + names).compactMap { row in
                row.count == 3 ? errorSum(row[1...]) : nil
            }
            other.errors = ErrorFigures(devices: sums, maxDeviceMs: windowMs)
            summary.other = FoldedVersions(versions: folded, figures: other)
        }
        summary.timeline = try await timeline(on: db, s, listed: names, windowMs: windowMs)
        return summary
    }

    /// The versions to list: the first ``listedVersions`` by rank, and those of `asked` a
    /// report names. When versions tie for the last places and not all of them fit, none of
    /// that tie is listed: which ones would be is up to the database's collation.
    static func listedVersions(on db: some SQLQuerying, _ s: Scope, since: Int64, asked: [String]) async throws -> [String] {
        let key = s.arguments
        let rows = try await db.query(ranked(s), key + [.integer(since)] + key + key + [.integer(Int64(listedVersions + 1))])
        let ranks: [(String, [Int64])] = rows.compactMap { row in
            guard row.count == 5, let v = row[0].text else { return nil }
            return (v, row[1...].map { $0.integer ?? 0 })
        }
        var listed = ranks.map(\.0)
        if ranks.count > listedVersions {
            let cut = ranks[listedVersions].1
            listed = ranks.prefix(listedVersions).filter { $0.1 != cut }.map(\.0)
        }
        let wanted = asked.filter { !listed.contains($0) }
        if !wanted.isEmpty {
            let names: [SQLValue] = wanted.map { .text($0) }
            listed += try await db.query(existing(wanted.count, s), key + names + key + names).compactMap { $0.first?.text }
        }
        return listed
    }

    /// Installs, trials, commits and the failure rate from ``figures``' four columns.
    static func apply(_ columns: ArraySlice<SQLValue>, to entry: inout VersionSummary) {
        let n = columns.map { Int($0.integer ?? 0) }
        guard n.count == 4 else { return }
        entry.installs = n[0]
        entry.trials = n[1]
        entry.commits = n[2]
        entry.failureRate = n[1] > 0 ? Double(n[3]) / Double(n[1]) : nil
    }

    /// Devices of `type` for `reason`.
    static func record(_ type: String, _ reason: String, _ n: Int, in entry: inout VersionSummary) {
        switch ReportKind(rawValue: type) {
        case .rolledBack: entry.rollbacks[reason] = n
        case .blacklisted: entry.blacklists[reason] = n
        case .webProcessDied: entry.webProcessDeaths[reason] = n
        case .downloadFailed: entry.downloadFailures[reason] = n
        case .checkRefused: entry.refusals[reason] = n
        case .downloadDeferred: entry.downloadDeferrals = entry.deferrals.merging([reason: n]) { _, new in new }
        default: break
        }
    }

    /// Devices per listed version at ``timelinePoints`` evenly spaced times over the data's span.
    static func timeline(on db: some SQLQuerying, _ s: Scope, listed: [SQLValue], windowMs: Int64) async throws -> [TimelinePoint] {
        let key = s.arguments
        guard let row = try await db.query(span(s), key).first, row.count == 2, let first = row[0].integer, let last = row[1].integer
        else { return [] }
        let steps = last > first ? timelinePoints : 1
        let sql = timelineAt(listed.count, s)
        var points: [TimelinePoint] = []
        for i in 0..<steps {
            let t = steps == 1 ? last : first + (last - first) * Int64(i) / Int64(steps - 1)
            var devices: [String: Int] = [:]
            for r in try await db.query(sql, listed + key + [.integer(t), .integer(t - windowMs)]) {
                guard r.count == 2, let n = r[1].integer else { continue }
                devices[r[0].text ?? FleetSummary.otherKey] = Int(n)
            }
            points.append(TimelinePoint(time: date(t), devices: devices))
        }
        return points
    }

    /// The median of the middle one (odd count) or two (even count) values: their mean, rounded down.
    static func median(_ middle: [Int64]) -> Int? {
        switch middle.count {
        case 1: return Int(middle[0])
        case 2: return Int((middle[0] + middle[1]) / 2)
        default: return nil
        }
    }

    /// Whether `a` comes before `b` byte by byte (UTF-8).
    static func bytewise(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }

    /// Newest SemVer first; other ids (embedded seeds) after, byte by byte.
    static func newer(_ a: String, than b: String) -> Bool {
        switch (Version(a), Version(b)) {
        case (let x?, let y?): return x != y ? x > y : bytewise(a, b)
        case (.some, nil): return true
        case (nil, .some): return false
        case (nil, nil): return bytewise(a, b)
        }
    }

    static func date(_ ms: Int64) -> Date { Date(timeIntervalSince1970: Double(ms) / 1000) }
}

extension FleetSummaryQuery {
    /// The devices a summary counts: an app and channel's, every one or those whose latest
    /// labels (their row in `devices`: the labels of the latest batch stored) include every
    /// label of a filter. Each query above puts ``sql(_:)`` where it names the app and
    /// channel and binds ``arguments`` there (the "app, channel" of their arguments).
    ///
    /// The labels are matched in SQL both stores run alike: a device's labels are stored as
    /// canonical JSON (`ReportBatch.labelsJSON`), which holds `"KEY":"VALUE"` exactly when the
    /// device has that label (`LabelFilter.patterns`); `REPLACE` (in SQLite and PostgreSQL,
    /// byte for byte whatever the collation) tells whether it is there, where `LIKE` would
    /// take `_` and `%` as wildcards and ignore case in SQLite.
    struct Scope {
        let app: String
        let channel: String
        let labels: LabelFilter

        /// The condition on the rows of a table of reports or devices, its columns named with
        /// `prefix` (`""`, `"i."`).
        func sql(_ prefix: String = "") -> String {
            let own = "\(prefix)app = ? AND \(prefix)channel = ?"
            guard !labels.isEmpty else { return own }
            let each = labels.patterns.map { _ in "REPLACE(l.labels, ?, '') <> l.labels" }.joined(separator: " AND ")
            return own + " AND \(prefix)device IN (SELECT l.device FROM devices l WHERE l.app = ? AND l.channel = ? AND \(each))"
        }

        /// The arguments of ``sql(_:)``: the app and channel, and with labels the app and
        /// channel again and each label's pattern.
        var arguments: [SQLValue] {
            let own: [SQLValue] = [.text(app), .text(channel)]
            guard !labels.isEmpty else { return own }
            return own + own + labels.patterns.map { .text($0) }
        }
    }
}

extension ReportStore {
    /// The summary of `app`/`channel`, listing `versions` whatever their rank, of the devices
    /// whose latest labels include `labels`
    /// (``FleetSummaryQuery/summary(on:app:channel:windowSeconds:now:versions:labels:)``).
    /// - Throws: ``FleetCollectorError`` `.storeFailed`.
    public func summary(
        app: String, channel: String, windowSeconds: Int, now: Date, versions: [String], labels: LabelFilter = LabelFilter()
    ) async throws -> FleetSummary {
        guard !versions.isEmpty || !labels.isEmpty else {
            return try await summary(app: app, channel: channel, windowSeconds: windowSeconds, now: now)
        }
        return try await FleetSummaryQuery.summary(
            on: self, app: app, channel: channel, windowSeconds: windowSeconds, now: now, versions: versions, labels: labels)
    }
}

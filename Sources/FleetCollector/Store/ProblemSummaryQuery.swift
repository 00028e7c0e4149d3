import ClientFoundation
import FleetReports
import Foundation

/// Builds a ``ProblemSummary`` (`GET /v1/problems`, docs/fleet-reports.md#what-breaks) from
/// the shared SQL, so SQLite and PostgreSQL answer alike.
///
/// Three queries, each one range of the partial index `reports_problems` (the problem
/// reports of one app and channel, by time): the versions with problems in the window
/// (at most ``candidateVersions``, by devices), their kinds by type and reason, and their
/// `page-errors` messages (at most ``detailsPerVersion`` distinct `detail`s a version).
/// None scans the table, nor the reports of one version per version.
public enum ProblemSummaryQuery {
    /// The most versions with problems read before the newest are picked: those with the
    /// most devices, then the latest reported.
    public static let candidateVersions = 200
    /// The most distinct `detail`s of one version read for its messages (the most reported).
    public static let detailsPerVersion = 100
    /// What separates the messages a `page-errors` report kept in its `detail`.
    public static let messageSeparator = " | "

    /// The rows that are problems: the condition of the partial index and of every query,
    /// the same text (SQLite uses a partial index only for a query holding its condition).
    static let problemRows =
        "(type IN ('rolled-back', 'web-process-died', 'download-failed') OR (type = 'page-errors' AND count IS NOT NULL))"

    /// The index the queries read: covering (every column they read is in it, so a query
    /// reads the index alone, never the table's rows), of the problem reports only (the
    /// others, most of them, cost it nothing at ingest).
    public static let index = """
        CREATE INDEX IF NOT EXISTS reports_problems ON reports (app, channel, time_ms, type, version, running, reason, device, count, detail)
        WHERE \(problemRows)
        """

    /// The version a problem counts for: the page on screen for a web-process death, a
    /// `page-errors` report's `version` (else what it ran), the version tried or downloaded.
    static let subject = "CASE WHEN type = 'web-process-died' THEN running WHEN type = 'page-errors' THEN COALESCE(version, running) ELSE version END"

    /// Versions with problems: version, devices, latest time; arguments: app, channel, since, limit.
    static let candidates = """
        SELECT v, COUNT(DISTINCT device), MAX(time_ms) FROM (
            SELECT \(subject) AS v, device, time_ms FROM reports WHERE app = ? AND channel = ? AND \(problemRows) AND time_ms >= ?
        ) AS p WHERE v IS NOT NULL GROUP BY v ORDER BY 2 DESC, 3 DESC LIMIT ?
        """

    /// Each listed version's kinds: version, type, reason, count, devices; arguments: app,
    /// channel, since, listed.
    static func kinds(_ n: Int) -> String {
        let cap = FleetSummaryQuery.maxReportFigure
        return """
            SELECT v, type, reason, CAST(SUM(n) AS BIGINT), COUNT(DISTINCT device) FROM (
                SELECT \(subject) AS v, type, CASE WHEN type = 'page-errors' THEN NULL ELSE reason END AS reason, device,
                    CASE WHEN type <> 'page-errors' THEN 1 WHEN count > \(cap) THEN \(cap) ELSE count END AS n
                FROM reports WHERE app = ? AND channel = ? AND \(problemRows) AND time_ms >= ?
            ) AS p WHERE \(FleetSummaryQuery.member("v", n)) GROUP BY v, type, reason
            """
    }

    /// Each listed version's most reported `page-errors` details: version, detail, reports;
    /// arguments: app, channel, since, listed, limit.
    static func details(_ n: Int) -> String {
        """
        SELECT v, detail, n FROM (
            SELECT v, detail, n, ROW_NUMBER() OVER (PARTITION BY v ORDER BY n DESC, latest DESC) AS rank FROM (
                SELECT v, detail, COUNT(*) AS n, MAX(time_ms) AS latest FROM (
                    SELECT COALESCE(version, running) AS v, detail, time_ms FROM reports
                    WHERE app = ? AND channel = ? AND \(problemRows) AND time_ms >= ? AND type = 'page-errors' AND detail IS NOT NULL
                ) AS p WHERE \(FleetSummaryQuery.member("v", n)) GROUP BY v, detail
            ) AS g
        ) AS ranked WHERE rank <= ?
        """
    }

    /// The problems of `app`/`channel` in the `windowSeconds` before `now`: the `versions`
    /// newest versions with problems, and those of `asked` whatever they had.
    /// - Throws: ``FleetCollectorError`` `.storeFailed`.
    public static func summary(
        on db: some SQLQuerying, app: String, channel: String, windowSeconds: Int, now: Date, versions: Int, asked: [String] = []
    ) async throws -> ProblemSummary {
        var answer = ProblemSummary(app: app, channel: channel, generated: now, windowSeconds: windowSeconds)
        let since = ReportSQL.millis(now) - Int64(windowSeconds) * 1000
        let key: [SQLValue] = [.text(app), .text(channel), .integer(since)]
        var listed: [String] = []
        for v in asked where !listed.contains(v) && listed.count < ProblemSummary.maxVersions { listed.append(v) }
        if listed.isEmpty {
            let rows = try await db.query(candidates, key + [.integer(Int64(candidateVersions + 1))])
            var ranked: [(version: String, rank: [Int64])] = rows.compactMap { row in
                guard row.count == 3, let v = row[0].text else { return nil }
                return (v, [row[1].integer ?? 0, row[2].integer ?? 0])
            }
            // A tie at the cut that does not fit is left out whole: which of it a database
            // would return depends on its collation.
            if ranked.count > candidateVersions {
                let cut = ranked[candidateVersions].rank
                ranked = ranked.prefix(candidateVersions).filter { $0.rank != cut }
            }
            let newest = ranked.map(\.version).sorted { FleetSummaryQuery.newer($0, than: $1) }
            listed = Array(newest.prefix(min(max(1, versions), ProblemSummary.maxVersions)))
        }
        guard !listed.isEmpty else { return answer }
        let names: [SQLValue] = listed.map { .text($0) }
        var problems: [String: [ProblemCount]] = [:]
        for row in try await db.query(kinds(listed.count), key + names) {
            guard row.count == 5, let v = row[0].text, let type = row[1].text, let count = row[3].integer, let devices = row[4].integer
            else { continue }
            problems[v, default: []].append(ProblemCount(kind: type, reason: row[2].text, count: count, devices: Int(devices)))
        }
        var messages: [String: [String: Int]] = [:]
        for row in try await db.query(details(listed.count), key + names + [.integer(Int64(detailsPerVersion))]) {
            guard row.count == 3, let v = row[0].text, let detail = row[1].text, let n = row[2].integer else { continue }
            for message in Self.messages(detail) { messages[v, default: [:]][message, default: 0] += Int(n) }
        }
        answer.versions = listed.sorted { FleetSummaryQuery.newer($0, than: $1) }.map { v in
            var list = (problems[v] ?? []).sorted(by: Self.moreFrequent)
            if let i = list.firstIndex(where: { $0.kind == ReportKind.pageErrors.rawValue }) {
                list[i].messages = Self.top(messages[v] ?? [:])
            }
            return VersionProblems(version: v, problems: Array(list.prefix(ProblemSummary.maxProblems)))
        }
        return answer
    }

    /// The messages a `detail` holds: split at ``messageSeparator``, each cut to
    /// ``ProblemSummary/maxMessageBytes`` on a character boundary (a device keeps no longer
    /// one; a longer one is another sender's), empty ones left out.
    static func messages(_ detail: String) -> [String] {
        detail.components(separatedBy: messageSeparator).compactMap { piece in
            var out = ""
            var used = 0
            for ch in piece {
                let n = String(ch).utf8.count
                if used + n > ProblemSummary.maxMessageBytes { break }
                out.append(ch)
                used += n
            }
            return out.trimmingCharacters(in: .whitespaces).isEmpty ? nil : out
        }
    }

    /// The most frequent messages first (ties byte by byte), at most ``ProblemSummary/maxMessages``.
    static func top(_ counts: [String: Int]) -> [KeptMessage] {
        counts.sorted { a, b in a.value != b.value ? a.value > b.value : FleetSummaryQuery.bytewise(a.key, b.key) }
            .prefix(ProblemSummary.maxMessages).map { KeptMessage(message: $0.key, count: $0.value) }
    }

    /// Most events first, then most devices, then kind and reason byte by byte.
    static func moreFrequent(_ a: ProblemCount, _ b: ProblemCount) -> Bool {
        if a.count != b.count { return a.count > b.count }
        if a.devices != b.devices { return a.devices > b.devices }
        if a.kind != b.kind { return FleetSummaryQuery.bytewise(a.kind, b.kind) }
        return FleetSummaryQuery.bytewise(a.reason ?? "", b.reason ?? "")
    }
}

extension ReportStore {
    /// What breaks in `app`/`channel` (``ProblemSummaryQuery/summary(on:app:channel:windowSeconds:now:versions:asked:)``).
    /// - Throws: ``FleetCollectorError`` `.storeFailed`.
    public func problems(app: String, channel: String, windowSeconds: Int, now: Date, versions: Int, asked: [String] = []) async throws
        -> ProblemSummary
    {
        try await ProblemSummaryQuery.summary(
            on: self, app: app, channel: channel, windowSeconds: windowSeconds, now: now, versions: versions, asked: asked)
    }
}

import FleetCollector
import FleetReports
import Foundation
import TestSupport
import Testing

/// The fleet summary stays bounded whatever strangers post (docs/fleet-reports.md#the-fleet-summary):
/// a flood of invented versions at every rollout percent leaves `GET /v1/fleet`, `fleet status`
/// and the page small and the real versions' figures right; SQLite and PostgreSQL (whatever
/// its collation) answer the same summary; a rollback whose `trial-started` was lost counts
/// as a trial.
@Suite(.serialized) struct CollectBoundsTests {
    typealias F = CollectorFixtures

    /// The most versions listed (``FleetSummaryQuery/listedVersions``).
    static let listed = 20
    /// The most rollout points per listed version (``FleetSummaryQuery/rolloutPointsPerVersion``).
    static let pointsPerVersion = 32
    /// Invented versions in the flood: three times what is listed, each seen at 101 rollout
    /// points (more than a listed version keeps), so every listed place and every listed
    /// version's rollout points are filled (the answer's largest size) and most are folded.
    static let floodVersions = 60
    /// The answer of the flood must stay under this (docs/fleet-reports.md states the figure).
    static let maxAnswerBytes = 128 * 1024

    /// An invented version: a new 64-byte pre-release of 9.9.9.
    static func invented(_ n: Int) -> String {
        let tail = String(format: "%06d", n)
        let version = "9.9.9-x" + String(repeating: "a", count: 64 - 7 - tail.count) + tail
        return version
    }

    /// A real fleet of `count` devices (ids from 1): 1.0.0, then 1.1.0 at 10, 50, 100 %,
    /// committed by most; every fifth rolls it back, and every tenth lost its `trial-started`.
    static func realFleet(_ count: Int, at t: Double) -> [ReportBatch] {
        (1...count).map { n in
            let percent = [10, 50, 100][n % 3]
            var reports = [
                F.report(1, .start, at: t, running: "1.0.0"),
                F.report(2, .updateFound, at: t + Double(10 * n), running: "1.0.0", version: "1.1.0", rollout: RolloutSeen(percent: percent)),
                F.report(3, .installed, at: t + Double(10 * n) + 1, running: "1.0.0", version: "1.1.0"),
            ]
            if n % 10 != 0 { reports.append(F.report(4, .trialStarted, at: t + Double(10 * n) + 2, running: "1.1.0", version: "1.1.0")) }
            if n % 5 == 0 {
                reports.append(F.report(5, .rolledBack, at: t + Double(10 * n) + 3, running: "1.0.0", version: "1.1.0", reason: .timedOut))
            } else {
                reports.append(F.report(5, .committed, at: t + Double(10 * n) + 3, running: "1.1.0", version: "1.1.0", ms: 500))
            }
            return F.batch(device: n, reports)
        }
    }

    /// The flood: `versions` invented versions, each seen at every rollout percent 0…100 by
    /// devices from 100,000 on, 500 reports a batch; each device's last report runs one of
    /// them, at a time of its own, so that invented versions take every place the real ones
    /// leave in the ranking (the worst case of the answer's size).
    static func flood(versions: Int, at t: Double) -> [ReportBatch] {
        var reports: [(String, Int)] = []
        for v in 0..<versions { for p in 0...100 { reports.append((invented(v), p)) } }
        return stride(from: 0, to: reports.count, by: 500).map { start in
            let device = 100_000 + start / 500
            let slice = reports[start..<min(start + 500, reports.count)]
            return F.batch(
                device: device,
                slice.enumerated().map { i, entry in
                    F.report(
                        Int64(i + 1), .updateFound, at: t + Double(start / 500) * 10 + Double(i) * 0.01, running: entry.0, version: entry.0,
                        rollout: RolloutSeen(percent: entry.1, paused: i % 2 == 0))
                })
        }
    }

    static func post(_ batches: [ReportBatch], to collector: CollectProcess) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (i, batch) in batches.enumerated() {
                if i >= 4 { try await group.next() }
                group.addTask {
                    let response = try await collector.post(batch.encoded())
                    guard response.status == 200 else { throw HarnessError("POST: \(response.status) \(response.body)") }
                }
            }
            try await group.waitForAll()
        }
    }

    static func object(_ data: Data) throws -> [String: Any] {
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else { throw HarnessError("not a JSON object") }
        return object
    }

    @Test func aFloodOfInventedVersionsLeavesTheSummaryBoundedAndTheRealFiguresRight() async throws {
        let dir = try TemporaryDirectory("collect-bounds")
        let collector = try await CollectProcess(database: "sqlite:" + dir("reports.db"), scratch: dir.path)
        let t = (Date().timeIntervalSince1970 - 7200).rounded(.down)
        try await Self.post(Self.realFleet(30, at: t), to: collector)
        try await Self.post(Self.flood(versions: Self.floodVersions, at: t + 600), to: collector)
        let path = "v1/fleet?app=\(F.app)&channel=\(F.channel)"
        let response = try await collector.read(path, token: collector.token)
        #expect(response.status == 200)
        print("CollectBoundsTests: the flood's answer is \(response.data.count) bytes")
        #expect(response.data.count < Self.maxAnswerBytes, "\(response.data.count) bytes")
        let json = try Self.object(response.data)
        let versions = json["versions"] as? [[String: Any]] ?? []
        let rollouts = json["rollouts"] as? [[String: Any]] ?? []
        let timeline = json["timeline"] as? [[String: Any]] ?? []
        #expect(versions.count == Self.listed, "the 2 real versions and 18 invented ones")
        #expect(rollouts.count <= Self.listed * Self.pointsPerVersion)
        #expect(timeline.allSatisfy { (($0["devices"] as? [String: Any])?.count ?? 0) <= Self.listed + 1 })
        // The real versions lead, their figures exact.
        let summary = try FleetSummary.decoder().decode(FleetSummary.self, from: response.data)
        let new = try #require(summary.versions.first { $0.version == "1.1.0" })
        #expect(new.installs == 30)
        #expect(new.trials == 30, "27 started a trial, 3 more rolled back with it lost")
        #expect(new.commits == 24)
        #expect(new.rollbacks == ["timed-out": 6])
        #expect(new.failureRate == 6.0 / 30.0)
        #expect(new.devicesNow == 24)
        #expect(summary.versions.contains { $0.version == "1.0.0" && $0.devicesNow == 6 })
        // 1.1.0's rollout points are its changes in time order: 10 50 100 10 50 100 …
        let steps = summary.rollouts.filter { $0.version == "1.1.0" }
        #expect(steps.count == min(30, Self.pointsPerVersion))
        #expect(steps.map(\.time) == steps.map(\.time).sorted())
        #expect(new.rollout == RolloutSeen(percent: 10), "device 30's, the last")
        // The folded versions are counted.
        let other = try #require(json["other"] as? [String: Any])
        #expect((other["versions"] as? Int).map { $0 >= Self.floodVersions - Self.listed } == true, "\(other)")
        // A version asked for is listed in full, whatever its rank.
        let asked = Self.invented(Self.floodVersions - 13)
        let one = try await collector.read(path + "&version=\(asked)&version=1.1.0", token: collector.token)
        #expect(one.status == 200)
        let judged = try FleetSummary.decoder().decode(FleetSummary.self, from: one.data)
        #expect(judged.versions.contains { $0.version == asked && $0.rollout != nil })
        #expect(judged.versions.contains { $0.version == "1.1.0" && $0.trials == 30 })
        #expect(judged.rollouts.filter { $0.version == asked }.count == Self.pointsPerVersion)
        // Bad `version` parameters are refused naming why.
        let bad = try await collector.read(path + "&version=a%20b", token: collector.token)
        #expect(bad.status == 400)
        #expect(F.error(bad)?.contains("version") == true, "\(bad.body)")
        let many = try await collector.read(path + String(repeating: "&version=1.0.0", count: 9), token: collector.token)
        #expect(many.status == 400)
        // `fleet status` and the page keep working.
        let status = try await ClientctlBinary.run([
            "fleet", "status", "--collector", collector.baseURL, "--token-file", collector.tokenPath, "--app", F.app, "--channel", F.channel,
        ])
        #expect(status.status == 0, "\(status.errorOutput)")
        #expect(status.output.contains("1.1.0"))
        #expect(status.output.contains("other versions)"), "\(status.output.prefix(3000))")
        let basic = Data("anyone:\(collector.token)".utf8).base64EncodedString()
        let page = try await Curl.request(
            collector.baseURL + "?app=\(F.app)&channel=\(F.channel)", headers: ["Authorization: Basic \(basic)"])
        #expect(page.status == 200)
        print("CollectBoundsTests: the flood's page is \(page.data.count) bytes")
        #expect(page.data.count < 1 << 20, "\(page.data.count) bytes")
        #expect(collector.stop() == 0)
    }

    @Test func aRollbackWhoseTrialStartWasLostCountsAsATrial() async throws {
        let dir = try TemporaryDirectory("collect-bounds")
        let collector = try await CollectProcess(database: "sqlite:" + dir("reports.db"), scratch: dir.path)
        let t = (Date().timeIntervalSince1970 - 3600).rounded(.down)
        let batches = [
            F.batch(
                device: 1,
                [
                    F.report(1, .trialStarted, at: t, running: "1.1.0", version: "1.1.0"),
                    F.report(2, .committed, at: t + 1, running: "1.1.0", version: "1.1.0", ms: 700),
                ]),
            // Its `trial-started` was lost (a full disk, a journal dropped): the rollback came.
            F.batch(device: 2, [F.report(5, .rolledBack, at: t + 2, running: "1.0.0", version: "1.1.0", reason: .pageCrashed)]),
        ]
        try await Self.post(batches, to: collector)
        let response = try await collector.read("v1/fleet?app=\(F.app)&channel=\(F.channel)", token: collector.token)
        let summary = try FleetSummary.decoder().decode(FleetSummary.self, from: response.data)
        let version = try #require(summary.versions.first { $0.version == "1.1.0" })
        #expect(version.trials == 2)
        #expect(version.failureRate == 0.5)
    }

    /// Versions and rollout points made to tie (same figures, same times) and to sort
    /// differently under a linguistic collation than byte by byte (`B` and `a`, `-` and `.`).
    static func ties(at t: Double) -> [ReportBatch] {
        let names = ["1.0.0-B", "1.0.0-a", "1.0.0.a", "1.0.0-_", "1.0.0-+", "1.0.0-Z", "1.0.0-z", "1.0.0-0"]
        var batches: [ReportBatch] = []
        // 24 versions with one device each, their rollouts seen at the same millisecond.
        for (i, base) in names.enumerated() {
            for k in 0..<3 {
                let version = base + String(repeating: "x", count: k)
                batches.append(
                    F.batch(
                        device: 500 + i * 3 + k,
                        [
                            F.report(1, .updateFound, at: t, running: "1.0.0", version: version, rollout: RolloutSeen(percent: 50)),
                            F.report(2, .installed, at: t, running: "1.0.0", version: version),
                        ]))
            }
        }
        return batches + Self.realFleet(12, at: t)
    }

    @Test func sqliteAndPostgreSQLAnswerAlikeUnderALinguisticCollation() async throws {
        let server = try await TestPostgres.shared()
        let name = "t_collation_\(UInt32.random(in: 0...UInt32.max))"
        // ICU's English collation: `a` before `B`, punctuation before digits.
        try await server.psql(
            "CREATE DATABASE \(name) TEMPLATE template0 ENCODING 'UTF8' LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'",
            database: "postgres")
        let dir = try TemporaryDirectory("collect-bounds")
        let postgres = try await CollectProcess(database: server.url(database: name), scratch: dir.path)
        let sqlite = try await CollectProcess(database: "sqlite:" + dir("reports.db"), scratch: dir.path)
        let t = (Date().timeIntervalSince1970 - 3600).rounded(.down)
        let batches = Self.ties(at: t)
        try await Self.post(batches, to: postgres)
        try await Self.post(batches, to: sqlite)
        let path = "v1/fleet?app=\(F.app)&channel=\(F.channel)&window=86400"
        // As listed by rank (the tied versions all folded), and with five of them asked for.
        let asked = ["1.0.0-B", "1.0.0-a", "1.0.0.a", "1.0.0-_", "1.0.0-+"].map {
            "&version=" + ($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0)
        }
        for query in [path, path + asked.joined()] {
            var fromPostgres = try FleetSummary.decoder().decode(FleetSummary.self, from: try await postgres.read(query, token: postgres.token).data)
            var fromSQLite = try FleetSummary.decoder().decode(FleetSummary.self, from: try await sqlite.read(query, token: sqlite.token).data)
            #expect(fromPostgres.versions.map(\.version) == fromSQLite.versions.map(\.version), "\(query)")
            #expect(fromPostgres.rollouts == fromSQLite.rollouts, "\(query)")
            #expect(fromPostgres.timeline == fromSQLite.timeline, "\(query)")
            fromPostgres.generated = Date(timeIntervalSince1970: 0)
            fromSQLite.generated = fromPostgres.generated
            #expect(fromPostgres == fromSQLite, "\(query)")
        }
        #expect(postgres.stop() == 0)
        #expect(sqlite.stop() == 0)
    }
}

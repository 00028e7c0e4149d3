import FleetCollector
import FleetReports
import Foundation
import TestSupport
import Testing

/// `GET /v1/problems` at a real `clientctl collect` on SQLite and on PostgreSQL
/// (docs/fleet-reports.md#what-breaks): per version, the problem kinds most frequent first
/// and the messages devices kept with their `page-errors`, within the window; the read
/// token; kept messages exactly as kept; a bounded answer whatever devices send.
@Suite struct ProblemsRouteTests {
    typealias F = CollectorFixtures

    /// A report `ago` seconds before `now`.
    static func report(
        _ seq: Int64, _ type: ReportKind, ago: Double, now: Double, running: String, version: String? = nil, reason: ReportReason? = nil,
        count: Int64? = nil, detail: String? = nil
    ) -> FleetReport {
        var r = F.report(seq, type, at: (now - ago).rounded(.down), running: running, version: version, reason: reason)
        r.count = count
        r.detail = detail
        if type == .pageErrors { r.ms = 3_600_000 }
        return r
    }

    static let typeError = "TypeError: x is undefined @ /app.js:12"
    static let referenceError = "ReferenceError: y is not defined"
    static let day = 86_400.0

    /// Five devices: 1.1.0 rolled back and failing after start, 1.2.0's downloads failing,
    /// 1.0.0 with one error; what is not a problem (a heartbeat, a commit, a `page-errors`
    /// of use without a problem) and what is older than a day (a rollback of 1.1.0 and the
    /// only one of 0.9.0) around them.
    static func fleet(now: Double) -> [ReportBatch] {
        func r(
            _ seq: Int64, _ type: ReportKind, _ ago: Double, running: String, version: String? = nil, reason: ReportReason? = nil,
            count: Int64? = nil, detail: String? = nil
        ) -> FleetReport {
            report(seq, type, ago: ago, now: now, running: running, version: version, reason: reason, count: count, detail: detail)
        }
        return [
            F.batch(
                device: 1,
                [
                    r(1, .rolledBack, 3_600, running: "1.0.0", version: "1.1.0", reason: .timedOut),
                    r(2, .pageErrors, 1_800, running: "1.1.0", version: "1.1.0", count: 10, detail: typeError + " | " + referenceError),
                    r(3, .heartbeat, 1_700, running: "1.1.0"),
                ]),
            F.batch(
                device: 2,
                [
                    r(1, .rolledBack, 3_000, running: "1.0.0", version: "1.1.0", reason: .timedOut),
                    r(2, .pageErrors, 1_200, running: "1.1.0", version: "1.1.0", count: 5, detail: typeError),
                    r(3, .pageErrors, 600, running: "1.1.0", version: "1.1.0"),
                    r(4, .committed, 500, running: "1.1.0", version: "1.1.0"),
                ]),
            F.batch(
                device: 3,
                [
                    r(1, .rolledBack, 3 * day, running: "1.0.0", version: "1.1.0", reason: .timedOut),
                    r(2, .rolledBack, 2_000, running: "1.0.0", version: "1.1.0", reason: .pageCrashed),
                    r(3, .webProcessDied, 900, running: "1.1.0", reason: .crashed),
                    r(4, .webProcessDied, 800, running: "1.1.0", reason: .crashed),
                ]),
            F.batch(
                device: 4,
                [
                    r(1, .downloadFailed, 500, running: "1.0.0", version: "1.2.0", reason: .network),
                    r(2, .downloadFailed, 400, running: "1.0.0", version: "1.2.0", reason: .network),
                    r(3, .downloadFailed, 300, running: "1.0.0", version: "1.2.0", reason: .hashMismatch),
                    r(4, .pageErrors, 100, running: "1.0.0", version: "1.0.0", count: 1, detail: referenceError),
                ]),
            F.batch(device: 5, [r(1, .rolledBack, 3 * day, running: "0.8.0", version: "0.9.0", reason: .timedOut)]),
        ]
    }

    /// What the fleet's problems within a day are.
    static let expected: [VersionProblems] = [
        VersionProblems(
            version: "1.2.0",
            problems: [
                ProblemCount(kind: "download-failed", reason: "network", count: 2, devices: 1),
                ProblemCount(kind: "download-failed", reason: "hash-mismatch", count: 1, devices: 1),
            ]),
        VersionProblems(
            version: "1.1.0",
            problems: [
                ProblemCount(
                    kind: "page-errors", count: 15, devices: 2,
                    messages: [KeptMessage(message: typeError, count: 2), KeptMessage(message: referenceError, count: 1)]),
                // Two rollbacks on two devices before two deaths on one.
                ProblemCount(kind: "rolled-back", reason: "timed-out", count: 2, devices: 2),
                ProblemCount(kind: "web-process-died", reason: "crashed", count: 2, devices: 1),
                ProblemCount(kind: "rolled-back", reason: "page-crashed", count: 1, devices: 1),
            ]),
        VersionProblems(
            version: "1.0.0",
            problems: [ProblemCount(kind: "page-errors", count: 1, devices: 1, messages: [KeptMessage(message: referenceError, count: 1)])]),
    ]

    /// A collector on `database` (`sqlite` or `postgresql`) in `dir`.
    static func collector(_ database: String, _ dir: TemporaryDirectory, name: String) async throws -> CollectProcess {
        if database == "postgresql" {
            let url = try await TestPostgres.shared().createDatabase(name)
            return try await CollectProcess(database: url, scratch: dir.path)
        }
        return try await CollectProcess(database: "sqlite:" + dir("reports.db"), scratch: dir.path)
    }

    /// `GET /v1/problems` with the read token: the answer as strictly read, and its bytes.
    static func problems(_ collector: CollectProcess, _ query: String = "", channel: String = F.channel) async throws -> (ProblemSummary, Data) {
        let response = try await collector.read("v1/problems?app=\(F.app)&channel=\(channel)" + query, token: collector.token)
        guard response.status == 200 else { throw HarnessError("GET /v1/problems: \(response.status) \(response.body)") }
        #expect(response["content-type"] == "application/json")
        return (try ProblemSummary.decode(response.data), response.data)
    }

    static func post(_ collector: CollectProcess, _ batches: [ReportBatch]) async throws {
        for batch in batches {
            let response = try await collector.post(batch.encoded())
            #expect(response.status == 200, "\(response.body)")
        }
    }

    @Test(arguments: ["sqlite", "postgresql"])
    func countsKindsAndMessagesPerVersionWithinTheWindow(database: String) async throws {
        let dir = try TemporaryDirectory("problems")
        let collector = try await Self.collector(database, dir, name: "problemscounts")
        let now = Date().timeIntervalSince1970
        try await Self.post(collector, Self.fleet(now: now))

        // The default window (a day): newest version first, most frequent kind first.
        let (answer, _) = try await Self.problems(collector)
        #expect(answer.app == F.app && answer.channel == F.channel && answer.windowSeconds == 86_400)
        #expect(abs(answer.generated.timeIntervalSince1970 - now) < 120)
        #expect(answer.versions == Self.expected)

        // At most N versions: the newest.
        let (two, _) = try await Self.problems(collector, "&versions=2")
        #expect(two.versions.map(\.version) == ["1.2.0", "1.1.0"])

        // Four days: 1.1.0's older rollback and 0.9.0's count too.
        let (four, _) = try await Self.problems(collector, "&window=\(4 * 86_400)")
        #expect(four.versions.map(\.version) == ["1.2.0", "1.1.0", "1.0.0", "0.9.0"])
        let timedOut = four.versions[1].problems.first { $0.reason == "timed-out" }
        #expect(timedOut == ProblemCount(kind: "rolled-back", reason: "timed-out", count: 3, devices: 3))
        #expect(four.versions[3].problems == [ProblemCount(kind: "rolled-back", reason: "timed-out", count: 1, devices: 1)])

        // A quarter of an hour: the web process's deaths of 1.1.0 (900 and 800 s ago) and
        // device 4's reports; no error of 1.1.0 (1,200 s ago and more).
        let (recent, _) = try await Self.problems(collector, "&window=1000")
        #expect(recent.versions.map(\.version) == ["1.2.0", "1.1.0", "1.0.0"])
        #expect(recent.versions[1].problems == [ProblemCount(kind: "web-process-died", reason: "crashed", count: 2, devices: 1)])

        // Versions asked by name are listed, problems or none, newest first.
        let (asked, _) = try await Self.problems(collector, "&version=0.9.0&version=1.0.0")
        #expect(asked.versions == [Self.expected[2], VersionProblems(version: "0.9.0")])

        // Another channel has no problems.
        let (other, _) = try await Self.problems(collector, channel: "beta")
        #expect(other.versions.isEmpty)
        #expect(collector.stop() == 0)
    }

    @Test func theReadTokenAndTheQueryAreCheckedAsForTheFleet() async throws {
        let dir = try TemporaryDirectory("problems-refusals")
        let collector = try await Self.collector("sqlite", dir, name: "")
        try await Self.post(collector, Self.fleet(now: Date().timeIntervalSince1970))
        let path = "v1/problems?app=\(F.app)&channel=\(F.channel)"
        for token in [nil, "wrong-token-0123456789", collector.token + "x"] {
            let response = try await collector.read(path, token: token)
            #expect(response.status == 401, "\(token ?? "no token"): \(response.body)")
            #expect(response["www-authenticate"]?.hasPrefix("Bearer") == true)
            #expect(!response.body.contains("1.1.0"), "nothing of the fleet without the token")
        }
        // The fleet page's basic auth is not taken here, as /v1/fleet takes none.
        let basic = Data("any:\(collector.token)".utf8).base64EncodedString()
        let viaBasic = try await Curl.request(collector.baseURL + path, headers: ["Authorization: Basic \(basic)"])
        #expect(viaBasic.status == 401)
        let refusals: [(String, String)] = [
            ("v1/problems?channel=stable", "app: missing"),
            ("v1/problems?app=\(F.app)", "channel: missing"),
            ("v1/problems?app=a%20b&channel=stable", "app: missing or not an identifier"),
            (path + "&window=59", "window: not a number of seconds in 60…"),
            (path + "&window=day", "window: not a number"),
            (path + "&versions=0", "versions: not a number of versions in 1…20"),
            (path + "&versions=21", "versions: not a number of versions in 1…20"),
            (path + "&version=1.0.0%3Cb%3E", "version: \"1.0.0<b>\" is not a version"),
            (path + String(repeating: "&version=1.0.0", count: 21), "version: 21 asked, at most 20"),
        ]
        for (query, message) in refusals {
            let response = try await collector.read(query, token: collector.token)
            #expect(response.status == 400, "\(query): \(response.body)")
            #expect(F.error(response)?.hasPrefix(message) == true, "\(query): \(response.body)")
        }
        #expect(collector.stop() == 0)
    }

    /// A message is text from a device: the collector passes it on as the device kept it
    /// (markup and all; whoever shows it escapes it), and refuses a batch whose `detail`
    /// holds control characters, as it refuses every such batch.
    @Test(arguments: ["sqlite", "postgresql"])
    func aHostileMessagePassesThroughExactlyAsKept(database: String) async throws {
        let dir = try TemporaryDirectory("problems-hostile")
        let collector = try await Self.collector(database, dir, name: "problemshostile")
        let now = Date().timeIntervalSince1970
        let script = "<script>alert(\"x\")</script> & '\\ \u{200B}é"
        let quoted = "</td><img src=x onerror=alert(1)>"
        #expect(script.utf8.count <= ProblemSummary.maxMessageBytes && quoted.utf8.count <= ProblemSummary.maxMessageBytes)
        let kept = Self.report(1, .pageErrors, ago: 60, now: now, running: "1.0.0", version: "1.0.0", count: 2, detail: script + " | " + quoted)
        try await Self.post(collector, [F.batch(device: 1, [kept])])
        for control in ["\u{1b}[31mred", "line\nbreak", "\u{202E}reversed", "bell\u{07}"] {
            let bad = Self.report(2, .pageErrors, ago: 30, now: now, running: "1.0.0", version: "1.0.0", count: 1, detail: control)
            let response = try await collector.post(F.batch(device: 2, [bad]).encoded())
            #expect(response.status == 400, "\(response.body)")
            #expect(F.error(response)?.contains("detail: has control characters") == true, "\(response.body)")
        }
        let (answer, data) = try await Self.problems(collector)
        let messages = answer.versions.first?.problems.first?.messages
        #expect(messages == [KeptMessage(message: quoted, count: 1), KeptMessage(message: script, count: 1)])
        // On the wire as JSON writes it: the markup as it is, the quote and backslash escaped.
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains("\"message\":\"<script>alert(\\\"x\\\")</script> & '\\\\ \u{200B}é\""), "\(text)")
        #expect(answer.versions.count == 1 && answer.versions[0].problems.count == 1, "the refused batches stored nothing")
        #expect(collector.stop() == 0)
    }

    /// A device that invents versions and sends every reason and long, distinct messages
    /// gets a bounded answer: at most 20 versions, 24 kinds each, 5 messages each of at
    /// most 60 bytes.
    @Test(arguments: ["sqlite", "postgresql"])
    func theAnswerIsBoundedWhateverDevicesSend(database: String) async throws {
        let dir = try TemporaryDirectory("problems-bounds")
        let collector = try await Self.collector(database, dir, name: "problemsbounds")
        let now = Date().timeIntervalSince1970
        let long = String(repeating: "x", count: 100)
        var batches: [ReportBatch] = []
        for version in 0..<30 {
            var reports: [FleetReport] = []
            for reason in ReportReason.allCases {
                let v = "1.\(version).0"
                for type in [ReportKind.rolledBack, .webProcessDied, .downloadFailed] {
                    let running = type == .webProcessDied ? v : "1.0.0"
                    reports.append(Self.report(Int64(reports.count + 1), type, ago: 60, now: now, running: running, version: v, reason: reason))
                }
                // 60 bytes of a message kept, then what no device keeps: 100 bytes in one.
                let detail = "message \(reason.rawValue) " + String(repeating: "m", count: 40) + " | " + long
                reports.append(
                    Self.report(Int64(reports.count + 1), .pageErrors, ago: 60, now: now, running: v, version: v, count: 1, detail: detail))
            }
            batches.append(ReportBatch(device: F.deviceID(1_000 + version), app: F.app, channel: F.channel, reports: reports))
        }
        try await Self.post(collector, batches)
        let (standard, _) = try await Self.problems(collector)
        #expect(standard.versions.count == ProblemSummary.defaultVersions)
        #expect(standard.versions.first?.version == "1.29.0")
        let (answer, data) = try await Self.problems(collector, "&versions=20")
        #expect(answer.versions.count == ProblemSummary.maxVersions)
        #expect(answer.versions.map(\.version) == (10..<30).reversed().map { "1.\($0).0" })
        for version in answer.versions {
            #expect(version.problems.count == ProblemSummary.maxProblems)
            let errors = try #require(version.problems.first { $0.kind == "page-errors" })
            #expect(errors.count == Int64(ReportReason.allCases.count), "every report's one problem")
            let messages = try #require(errors.messages)
            #expect(messages.count == ProblemSummary.maxMessages)
            // The 100-byte one, cut to 60 bytes, was kept by every report: the most frequent.
            #expect(messages.first == KeptMessage(message: String(long.prefix(60)), count: ReportReason.allCases.count))
            #expect(messages.allSatisfy { $0.message.utf8.count <= ProblemSummary.maxMessageBytes })
        }
        #expect(data.count < 64 << 10, "\(data.count) bytes")
        #expect(collector.stop() == 0)
    }
}

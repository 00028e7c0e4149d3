import Foundation
import TestSupport
import Testing

/// `clientctl fleet status` and the collector's page against a real `clientctl collect`
/// (SQLite) fed batches whose truth the test knows: the table, `--json` (the collector's
/// own JSON), `--html` and the live page at `/` as headless Chromium shows them.
@Suite(.serialized) struct FleetStatusCollectorTests {
    static let app = "com.example.notes"

    static func device(_ n: Int) -> String { String(format: "%032x", n) }

    /// One batch: `reports` are `(type, running, extra fields)`, a second apart, ending now.
    static func batch(_ n: Int, _ reports: [(String, String, String)]) -> Data {
        let now = Int64(Date().timeIntervalSince1970 * 1000) - 60_000
        let lines = reports.enumerated().map { i, r in
            "{\"seq\":\(i + 1),\"time\":\(now - Int64(reports.count - i) * 1000),\"type\":\"\(r.0)\",\"running\":\"\(r.1)\"\(r.2)}"
        }
        return Data(
            "{\"schema\":1,\"device\":\"\(device(n))\",\"app\":\"\(app)\",\"channel\":\"stable\",\"reports\":[\(lines.joined(separator: ","))]}"
                .utf8)
    }

    /// Five devices: two commit 1.1.0 (one's web process then dies), one rolls it back
    /// (timed out) and blacklists it, one is refused it by the rollout, one waits for its
    /// download window and then takes three quarters of the archive from a site mirror.
    static let batches: [Data] = [
        batch(
            1,
            [
                ("start", "1.0.0", ""), ("update-found", "1.0.0", ",\"version\":\"1.1.0\",\"rollout\":{\"percent\":50,\"paused\":false}"),
                ("installed", "1.0.0", ",\"version\":\"1.1.0\""), ("trial-started", "1.1.0", ",\"version\":\"1.1.0\""),
                ("committed", "1.1.0", ",\"version\":\"1.1.0\",\"ms\":800"),
            ]),
        batch(
            2,
            [
                ("start", "1.0.0", ""), ("installed", "1.0.0", ",\"version\":\"1.1.0\""), ("trial-started", "1.1.0", ",\"version\":\"1.1.0\""),
                ("rolled-back", "1.0.0", ",\"version\":\"1.1.0\",\"reason\":\"timed-out\""),
                ("blacklisted", "1.0.0", ",\"version\":\"1.1.0\",\"reason\":\"timed-out\""),
            ]),
        batch(
            3,
            [
                ("start", "1.0.0", ""), ("installed", "1.0.0", ",\"version\":\"1.1.0\""), ("trial-started", "1.1.0", ",\"version\":\"1.1.0\""),
                ("committed", "1.1.0", ",\"version\":\"1.1.0\",\"ms\":800"), ("web-process-died", "1.1.0", ",\"reason\":\"crashed\""),
            ]),
        batch(
            4,
            [
                ("heartbeat", "1.0.0", ""),
                ("check-refused", "1.0.0", ",\"version\":\"1.1.0\",\"reason\":\"rollout\",\"rollout\":{\"percent\":50,\"paused\":false}"),
            ]),
        // A download that waited for its window, then came three quarters from a site mirror.
        batch(
            5,
            [
                ("download-deferred", "1.0.0", ",\"version\":\"1.1.0\",\"reason\":\"window\""),
                ("downloaded", "1.0.0", ",\"version\":\"1.1.0\",\"via\":\"archive\",\"bytes\":4000,\"mirrorBytes\":3000"),
            ]),
    ]

    /// The truth of ``batches`` per version and field, as the page names them.
    static let truth: [(String, String, String)] = [
        ("1.1.0", "devicesNow", "2"), ("1.1.0", "installs", "3"), ("1.1.0", "trials", "3"), ("1.1.0", "commits", "2"),
        ("1.1.0", "rollbacks", "1"), ("1.1.0", "blacklists", "1"), ("1.1.0", "webProcessDeaths", "1"), ("1.1.0", "refusals", "1"),
        ("1.1.0", "failureRate", "33.3 %"), ("1.1.0", "medianAckMs", "800 ms"), ("1.0.0", "devicesNow", "3"),
        ("1.1.0", "downloadDeferrals", "1"), ("1.1.0", "mirrorShare", "75.0 %"),
    ]

    static func figure(_ html: String, version: String, field: String) -> String? {
        guard let at = html.range(of: "data-version=\"\(version)\" data-field=\"\(field)\"") else { return nil }
        let rest = html[at.upperBound...]
        guard let open = rest.firstIndex(of: ">"), let close = rest[open...].firstIndex(of: "<") else { return nil }
        return String(rest[rest.index(after: open)..<close])
    }

    func fed(_ dir: TemporaryDirectory) async throws -> CollectProcess {
        let collector = try await CollectProcess(database: "sqlite:" + dir("reports.db"), scratch: dir.path)
        for batch in Self.batches {
            let posted = try await collector.post(batch)
            #expect(posted.status == 200, "\(posted.body)")
        }
        return collector
    }

    func status(_ collector: CollectProcess, _ extra: [String]) async throws -> Subprocess.Result {
        try await ClientctlBinary.run(
            ["fleet", "status", "--collector", collector.baseURL, "--token-file", collector.tokenPath, "--app", Self.app, "--channel", "stable"]
                + extra)
    }

    /// A JSON object without its `generated` (the time of each answer).
    static func withoutGenerated(_ data: Data) throws -> NSDictionary {
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["generated"] != nil)
        return object.filter { $0.key != "generated" } as NSDictionary
    }

    @Test func theTableTheJSONAndThePageShowTheBatchesTruth() async throws {
        let dir = try TemporaryDirectory("fleet-collect")
        let collector = try await fed(dir)
        // Every column (--wide), whatever the terminal's width.
        let text = try await status(collector, ["--window", "1h", "--wide"])
        #expect(text.status == 0, "\(text.errorOutput)")
        #expect(text.output.hasPrefix("com.example.notes · stable: 5 devices, 0 silent (window 1 h)"), "\(text.output)")
        // VERSION NOW INSTALLS TRIALS COMMITS ROLLBACKS FAILED BLACKLISTS WEB-DEATHS MEDIAN-ACK STAGED TO-RUNNING DEFERRED FROM-MIRRORS ROLLOUT
        let row = try #require(text.output.split(separator: "\n").first { $0.hasPrefix("1.1.0 ") })
        #expect(row.split(separator: " ").joined(separator: " ") == "1.1.0 2 3 3 2 1 33.3 % 1 1 – 800 ms 0 – 1 75.0 % 50 %", "\(row)")
        #expect(text.output.contains("1.1.0  rollbacks: timed-out 1"))
        #expect(text.output.contains("1.1.0  web-process deaths: crashed 1"))
        #expect(text.output.contains("1.1.0  download deferrals: window 1"))

        let json = try await status(collector, ["--window", "1h", "--json"])
        #expect(json.status == 0, "\(json.errorOutput)")
        let direct = try await collector.read("v1/fleet?app=\(Self.app)&channel=stable&window=3600", token: collector.token)
        #expect(direct.status == 200)
        #expect(try Self.withoutGenerated(json.stdout) == Self.withoutGenerated(direct.data))

        let page = dir("fleet.html")
        let html = try await status(collector, ["--window", "1h", "--html", page])
        #expect(html.status == 0, "\(html.errorOutput)")
        let dom = try await Chromium.dumpDOM("file://" + page)
        for (version, field, value) in Self.truth {
            #expect(Self.figure(dom, version: version, field: field) == value, "\(version) \(field)")
        }
        #expect(collector.stop() == 0)
    }

    /// The first four of ``batches`` again, devices 1 and 2 in store 12 (device 2 also in ring
    /// beta) and devices 3 and 4 in store 13: `fleet status --label` shows one store's
    /// figures alone, `--json` says whose, and a cohort nobody is in has none.
    @Test func labelsShowOneCohortsFiguresOnly() async throws {
        let dir = try TemporaryDirectory("fleet-collect")
        let collector = try await CollectProcess(database: "sqlite:" + dir("reports.db"), scratch: dir.path)
        let labels = ["{\"store\":\"12\"}", "{\"store\":\"12\",\"ring\":\"beta\"}", "{\"store\":\"13\"}", "{\"store\":\"13\"}"]
        for (i, batch) in Self.batches.prefix(labels.count).enumerated() {
            let text = String(decoding: batch, as: UTF8.self)
            let labelled = text.replacingOccurrences(of: ",\"reports\":", with: ",\"labels\":\(labels[i]),\"reports\":")
            let posted = try await collector.post(Data(labelled.utf8))
            #expect(posted.status == 200, "\(posted.body)")
        }
        // Store 12: device 1 committed 1.1.0, device 2 rolled it back and blacklisted it.
        let store12 = try await status(collector, ["--window", "1h", "--label", "store=12", "--wide"])
        #expect(store12.status == 0, "\(store12.errorOutput)")
        #expect(store12.output.hasPrefix("com.example.notes · stable · labels store=12: 2 devices, 0 silent (window 1 h)"), "\(store12.output)")
        let row = try #require(store12.output.split(separator: "\n").first { $0.hasPrefix("1.1.0 ") })
        #expect(row.split(separator: " ").joined(separator: " ") == "1.1.0 1 2 2 1 1 50.0 % 1 0 – 800 ms 0 – 0 – 50 %", "\(row)")
        #expect(store12.output.contains("1.1.0  rollbacks: timed-out 1"))
        #expect(!store12.output.contains("web-process deaths"), "device 3's crash is store 13's: \(store12.output)")
        // Store 13: device 3 committed 1.1.0 and its page crashed; device 4 waits for the rollout.
        let store13 = try await status(collector, ["--window", "1h", "--label", "store=13", "--wide"])
        let row13 = try #require(store13.output.split(separator: "\n").first { $0.hasPrefix("1.1.0 ") })
        #expect(row13.split(separator: " ").joined(separator: " ") == "1.1.0 1 1 1 1 0 0.0 % 0 1 – 800 ms 0 – 0 – 50 %", "\(row13)")
        #expect(store13.output.contains("1.1.0  refusals: rollout 1"), "\(store13.output)")
        // Both labels of device 2.
        let beta = try await status(collector, ["--window", "1h", "--label", "ring=beta", "--label", "store=12", "--json"])
        #expect(beta.status == 0, "\(beta.errorOutput)")
        let object = try #require(try JSONSerialization.jsonObject(with: beta.stdout) as? [String: Any])
        #expect(object["devices"] as? Int == 1 && object["labels"] as? [String: String] == ["ring": "beta", "store": "12"], "\(beta.output)")
        // Nobody is in store 14; without --label, every device as before.
        let none = try await status(collector, ["--label", "store=14"])
        #expect(none.status == 0 && none.output.contains("labels store=14: 0 devices") && none.output.contains("No reports yet."), "\(none.output)")
        let all = try await status(collector, ["--window", "1h"])
        #expect(all.output.hasPrefix("com.example.notes · stable: 4 devices"), "\(all.output)")
        #expect(collector.stop() == 0)
    }

    @Test func theCollectorServesThePageBehindBasicAuth() async throws {
        let dir = try TemporaryDirectory("fleet-collect")
        let collector = try await fed(dir)
        let query = "?app=\(Self.app)&channel=stable&window=3600"
        let anonymous = try await Curl.request(collector.baseURL + query)
        #expect(anonymous.status == 401)
        #expect(anonymous["www-authenticate"]?.hasPrefix("Basic realm=") == true, "\(anonymous.headers)")
        let basic = Data("anyone:\(collector.token)".utf8).base64EncodedString()
        let wrong = Data("anyone:not-the-token-0123456789".utf8).base64EncodedString()
        #expect(try await Curl.request(collector.baseURL + query, headers: ["Authorization: Basic \(wrong)"]).status == 401)
        let page = try await Curl.request(collector.baseURL + query, headers: ["Authorization: Basic \(basic)"])
        #expect(page.status == 200)
        #expect(page["content-type"]?.hasPrefix("text/html") == true)
        #expect(page.body.contains("Content-Security-Policy"))
        // Chromium, given the credentials in the URL (RFC 3986 userinfo), shows the same figures.
        let dom = try await Chromium.dumpDOM("http://anyone:\(collector.token)@127.0.0.1:\(collector.port)/\(query)")
        for (version, field, value) in Self.truth {
            #expect(Self.figure(dom, version: version, field: field) == value, "\(version) \(field)")
        }
        #expect(collector.stop() == 0)
    }

    @Test func aWrongTokenIs78() async throws {
        let dir = try TemporaryDirectory("fleet-collect")
        let collector = try await fed(dir)
        let token = dir("wrong.token")
        try Data("not-the-read-token-0123456789".utf8).write(to: URL(fileURLWithPath: token))
        let run = try await ClientctlBinary.run([
            "fleet", "status", "--collector", collector.baseURL, "--token-file", token, "--app", Self.app, "--channel", "stable",
        ])
        #expect(run.status == 78, "\(run.errorOutput)")
        #expect(run.errorOutput.contains("HTTP 401"), "\(run.errorOutput)")
        #expect(collector.stop() == 0)
    }
}

import Foundation
import TestSupport
import Testing

/// `clientctl fleet status` against a collector stand-in on loopback: what it asks (the
/// route, the query, the bearer token) and what a user sees for each answer — the table,
/// the JSON as it came, the page, and a distinct exit status for every failure
/// (docs/reference/exit-codes.md), with an existing `--html` file left as it was.
@Suite struct FleetStatusCommandTests {
    static let token = "read-token-0123456789abcdef"

    /// A summary as the collector's wire form writes it (docs/fleet-reports.md#the-fleet-summary).
    static let summaryJSON = """
        {"app":"com.example.notes","channel":"stable","devices":3,"generated":"2026-11-25T12:00:00Z",\
        "rollouts":[{"rollout":{"paused":false,"percent":50},"time":"2026-11-25T10:00:00Z","version":"1.1.0"}],\
        "silent":[{"device":"0123456789abcdef0123456789abcdef","lastSeen":"2026-11-24T09:00:00Z","running":"1.0.0"}],\
        "silentDevices":1,"timeline":[{"devices":{"1.0.0":2},"time":"2026-11-25T10:00:00Z"},\
        {"devices":{"1.0.0":1,"1.1.0":1},"time":"2026-11-25T12:00:00Z"}],\
        "versions":[{"blacklists":{"timed-out":1},"commits":1,"devicesNow":1,"downloadFailures":{},"failureRate":0.5,\
        "installs":2,"medianAckMs":840,"refusals":{},"rollbacks":{"timed-out":1},"rollout":{"paused":false,"percent":50},\
        "trials":2,"version":"1.1.0","webProcessDeaths":{}},{"blacklists":{},"commits":0,"devicesNow":1,\
        "downloadFailures":{},"installs":0,"refusals":{},"rollbacks":{},"trials":0,"version":"1.0.0",\
        "webProcessDeaths":{}}],"windowSeconds":3600}
        """

    func tokenFile(_ dir: TemporaryDirectory) throws -> String {
        let path = dir("read.token")
        try Data((Self.token + "\n").utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    func status(_ collector: String, _ dir: TemporaryDirectory, _ extra: [String] = []) async throws -> Subprocess.Result {
        try await ClientctlBinary.run(
            ["fleet", "status", "--collector", collector, "--token-file", try tokenFile(dir), "--app", "com.example.notes", "--channel", "stable"]
                + extra)
    }

    @Test func theTableTheJSONAndThePage() async throws {
        let dir = try TemporaryDirectory("fleet-status")
        let server = try LoopbackHTTPServer { _ in .text(Self.summaryJSON, contentType: "application/json") }
        let text = try await status(server.baseURL.absoluteString + "/", dir, ["--window", "1h"])
        #expect(text.status == 0, "\(text.errorOutput)")
        #expect(text.output.hasPrefix("com.example.notes · stable: 3 devices, 1 silent (window 1 h)"), "\(text.output)")
        #expect(text.output.contains("1.1.0      1         2       2        1          1  50.0 %"), "\(text.output)")
        #expect(text.output.contains("1.1.0  rollbacks: timed-out 1"))
        let request = try #require(server.requests.first)
        #expect(request.method == "GET" && request.path == "/v1/fleet")
        #expect(request.queryItems == ["app": "com.example.notes", "channel": "stable", "window": "3600"])
        #expect(request[header: "authorization"] == "Bearer \(Self.token)")

        let json = try await status(server.baseURL.absoluteString, dir, ["--json"])
        #expect(json.status == 0, "\(json.errorOutput)")
        #expect(json.output == Self.summaryJSON + "\n")
        #expect(server.requests.last?.queryItems["window"] == nil, "no --window: the collector's default")

        let page = dir("fleet.html")
        let html = try await status(server.baseURL.absoluteString, dir, ["--html", page])
        #expect(html.status == 0, "\(html.errorOutput)")
        let written = try String(contentsOfFile: page, encoding: .utf8)
        #expect(written.contains("data-version=\"1.1.0\" data-field=\"trials\">2<"))
        #expect(written.contains("data-version=\"1.1.0\" data-field=\"rollbacks\" data-reason=\"timed-out\">1<"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["fleet.html", "read.token"])
    }

    @Test(arguments: [
        (401, "{\"error\":\"wrong read token\"}", Int32(78), "HTTP 401: wrong read token"),
        (503, "{\"error\":\"the report store is unavailable; retry later\"}", 69, "HTTP 503: the report store is unavailable"),
        (429, "", 69, "HTTP 429"),
        (400, "{\"error\":\"channel: missing or not an identifier\"}", 64, "HTTP 400: channel: missing"),
        (404, "not here", 65, "HTTP 404"),
        (200, "{\"app\": 1}", 65, "the answer is not a fleet summary"),
        (200, "<html>a proxy's login page</html>", 65, "the answer is not a fleet summary"),
    ])
    func everyFailureHasItsStatusAndLeavesThePageAsItWas(status: Int, body: String, exit: Int32, message: String) async throws {
        let dir = try TemporaryDirectory("fleet-status")
        let server = try LoopbackHTTPServer { _ in .text(body, status: status, contentType: "application/json") }
        let page = dir("fleet.html")
        try Data("the page of yesterday".utf8).write(to: URL(fileURLWithPath: page))
        let run = try await self.status(server.baseURL.absoluteString, dir, ["--html", page])
        #expect(run.status == exit, "\(run.errorOutput)")
        #expect(run.errorOutput.contains(message), "\(run.errorOutput)")
        #expect(run.errorOutput.split(separator: "\n").count == 1, "one line: \(run.errorOutput)")
        #expect(run.output.isEmpty)
        #expect(try String(contentsOfFile: page, encoding: .utf8) == "the page of yesterday")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() == ["fleet.html", "read.token"])
    }

    /// `--label` asks for one cohort (`label=KEY=VALUE`, percent-encoded, in key order) and
    /// takes only an answer that says it is of that cohort: a collector before labels ignores
    /// the parameter and answers for every device, which is refused (65), never shown as
    /// the cohort's figures.
    @Test func labelsAskForOneCohortAndAnAnswerForEveryDeviceIsRefused() async throws {
        let dir = try TemporaryDirectory("fleet-status")
        let cohort = Self.summaryJSON.replacingOccurrences(of: "\"generated\"", with: "\"labels\":{\"ring\":\"beta\",\"store\":\"12\"},\"generated\"")
        let server = try LoopbackHTTPServer { request in
            .text(request.queryItems["label"] == nil ? Self.summaryJSON : cohort, contentType: "application/json")
        }
        let text = try await status(server.baseURL.absoluteString, dir, ["--label", "store=12", "--label", "ring=beta"])
        #expect(text.status == 0, "\(text.errorOutput)")
        #expect(text.output.hasPrefix("com.example.notes · stable · labels ring=beta,store=12: 3 devices"), "\(text.output)")
        let request = try #require(server.requests.last)
        #expect(request.query?.hasSuffix("&label=ring%3Dbeta&label=store%3D12") == true, "\(request.query ?? "")")

        let json = try await status(server.baseURL.absoluteString, dir, ["--label", "store=12", "--label", "ring=beta", "--json"])
        #expect(json.status == 0 && json.output == cohort + "\n", "\(json.errorOutput)")

        let old = try LoopbackHTTPServer { _ in .text(Self.summaryJSON, contentType: "application/json") }
        let refused = try await status(old.baseURL.absoluteString, dir, ["--label", "store=12", "--html", dir("fleet.html")])
        #expect(refused.status == 65, "\(refused.errorOutput)")
        #expect(refused.errorOutput.contains("the collector answered for every device, not for --label store=12"), "\(refused.errorOutput)")
        #expect(refused.errorOutput.split(separator: "\n").count == 1 && refused.output.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: dir("fleet.html")))
    }

    /// A bad `--label` is one line and exit 64, before the collector or the token file is touched.
    @Test(arguments: [
        (["store"], "--label 'store': not KEY=VALUE"),
        (["Store=12"], "--label 'Store=12': the key must start with a lowercase letter"),
        (["store="], "--label 'store=': the value is empty"),
        (["store=1 2"], "--label 'store=1 2': the value has the character ' '"),
        (["id=3"], "--label 'id=3': the key is reserved by the target language"),
        (["store=12", "store=13"], "--label 'store=13': the key 'store' is given twice"),
        ((1...9).map { "k\($0)=v" }, "--label: 9 labels, at most 8"),
    ])
    func aBadLabelIsOneLineAnd64(labels: [String], message: String) async throws {
        let dir = try TemporaryDirectory("fleet-status")
        for command in ["status", "devices"] {
            let scope = command == "status" ? ["--app", "a", "--channel", "c"] : []
            let run = try await ClientctlBinary.run(
                ["fleet", command, "--collector", "http://127.0.0.1:9/", "--token-file", dir("none")] + scope
                    + labels.flatMap { ["--label", $0] })
            #expect(run.status == 64, "\(command) \(labels): \(run.errorOutput)")
            #expect(run.errorOutput.hasPrefix("clientctl: " + message), "\(command): \(run.errorOutput)")
            #expect(run.errorOutput.split(separator: "\n").count == 1, "one line: \(run.errorOutput)")
        }
    }

    @Test func aCollectorThatIsDownIs69() async throws {
        let dir = try TemporaryDirectory("fleet-status")
        let refusing = try LoopbackHTTPServer.refusingPort()
        let run = try await status("http://127.0.0.1:\(refusing.port)/", dir)
        #expect(run.status == 69, "\(run.errorOutput)")
        #expect(run.errorOutput.contains("127.0.0.1:\(refusing.port)"), "\(run.errorOutput)")
    }

    @Test func badFlagsAndAMissingTokenFile() async throws {
        let dir = try TemporaryDirectory("fleet-status")
        let missing = try await ClientctlBinary.run([
            "fleet", "status", "--collector", "http://127.0.0.1:9/", "--token-file", dir("none"), "--app", "a", "--channel", "c",
        ])
        #expect(missing.status == 66, "\(missing.errorOutput)")
        #expect(missing.errorOutput.contains("--token-file \(dir("none"))"), "\(missing.errorOutput)")
        for window in ["10", "0", "1y", "400d", "-5m"] {
            let run = try await status("http://127.0.0.1:9/", dir, ["--window", window])
            #expect(run.status == 64, "--window \(window): \(run.errorOutput)")
        }
        let scheme = try await status("ftp://127.0.0.1/", dir)
        #expect(scheme.status == 64, "\(scheme.errorOutput)")
        #expect(scheme.errorOutput.contains("not an http: or https: URL"), "\(scheme.errorOutput)")
    }
}

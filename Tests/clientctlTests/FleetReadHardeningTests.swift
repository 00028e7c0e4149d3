import ClientFoundation
import ClientUpdater
import Foundation
import TestSupport
import Testing

/// Issue 43, what `fleet status`, `rollout guard` and a device's `status` print or send:
/// the collector's read token never leaves for another host or port on a redirect, and no
/// control character or bidi override a collector (or the reports it stored) put in its
/// text reaches the terminal.
@Suite struct FleetReadHardeningTests {
    static let token = "read-token-0123456789abcdef"

    /// ESC [ 2 J (clear the screen), BEL, the C1 CSI and RIGHT-TO-LEFT OVERRIDE.
    static let hostile: [Unicode.Scalar] = ["\u{1b}", "\u{07}", "\u{9b}", "\u{202e}"]

    /// Whether `text` holds any of ``hostile`` or any other C0, DEL, C1 or bidi control
    /// (newlines and tabs aside, the renderers' own).
    static func isClean(_ text: String) -> Bool {
        !text.unicodeScalars.contains { scalar in
            hostile.contains(scalar) || (TerminalText.isControl(scalar) && scalar != "\n" && scalar != "\t")
        }
    }

    static func tokenFile(_ dir: TemporaryDirectory) throws -> String {
        let path = dir("read.token")
        try Data((token + "\n").utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func status(_ collector: String, _ dir: TemporaryDirectory, _ extra: [String] = []) async throws -> Subprocess.Result {
        try await ClientctlBinary.run(
            ["fleet", "status", "--collector", collector, "--token-file", try tokenFile(dir), "--app", "com.example.notes", "--channel", "stable"]
                + extra)
    }

    // MARK: Redirects

    /// The collector answers a redirect to a second listener on another port, which would
    /// answer a valid summary: nothing may reach it, the command fails with 64 naming the
    /// status and the Location.
    @Test(arguments: [301, 302, 303, 307, 308])
    func fleetStatusFollowsNoRedirectAndTheTokenStays(status code: Int) async throws {
        let dir = try TemporaryDirectory("fleet-redirect")
        let elsewhere = try LoopbackHTTPServer { _ in .text(FleetStatusCommandTests.summaryJSON, contentType: "application/json") }
        let target = elsewhere.url("/v1/fleet").absoluteString
        let collector = try LoopbackHTTPServer { _ in
            var answer = LoopbackResponse.status(code)
            answer.setHeader("Location", target)
            return answer
        }
        let run = try await Self.status(collector.baseURL.absoluteString + "/", dir)
        #expect(elsewhere.requests.isEmpty, "the second listener got \(elsewhere.requests.map { ($0.description, $0[header: "authorization"]) })")
        #expect(collector.requests.count == 1)
        #expect(run.status == 64, "\(run.status) \(run.output) \(run.errorOutput)")
        #expect(run.output.isEmpty)
        let lines = run.errorOutput.split(separator: "\n")
        #expect(lines.count == 1, "one line: \(run.errorOutput)")
        #expect(run.errorOutput.contains("answered \(code) to '\(target)'"), "\(run.errorOutput)")
        #expect(run.errorOutput.contains("redirects are not followed") && run.errorOutput.contains("use the final URL"), "\(run.errorOutput)")
    }

    /// `rollout guard` asks the same way: a redirect is refused before anything is signed,
    /// and the second listener hears nothing.
    @Test func rolloutGuardFollowsNoRedirectAndWritesNothing() async throws {
        let rig = try await RestrictionRig()
        try await rig.d.installAndCommit(["1.0.0"])
        try rig.d.publish("1.1.0")
        let dir = try TemporaryDirectory("guard-redirect")
        let elsewhere = try LoopbackHTTPServer { _ in .text(FleetStatusCommandTests.summaryJSON, contentType: "application/json") }
        let collector = try LoopbackHTTPServer { _ in
            var answer = LoopbackResponse.status(307)
            answer.setHeader("Location", elsewhere.url("/v1/fleet?app=com.example.notes&channel=stable").absoluteString)
            return answer
        }
        let before = try TreeSnapshot(rig.d.releases.path)
        let run = try await ClientctlBinary.run([
            "rollout", "guard", "stable", "--out", rig.d.releases.path, "--key", rig.d.tmp("keys/guard.pem"), "--collector",
            collector.baseURL.absoluteString + "/", "--token-file", try Self.tokenFile(dir),
        ])
        #expect(elsewhere.requests.isEmpty, "the second listener got \(elsewhere.requests)")
        #expect(run.status == 64, "\(run.status) \(run.output) \(run.errorOutput)")
        #expect(run.errorOutput.contains("answered 307 to"), "\(run.errorOutput)")
        #expect(try TreeSnapshot(rig.d.releases.path) == before)
    }

    // MARK: Terminal escapes

    /// A summary whose every free-text string a collector controls carries ESC [ 2 J, BEL,
    /// U+009B and U+202E (JSON escapes for C0, the rest raw, as JSON allows). Device ids are
    /// not free text: one that is not a device id is refused (the test after this one).
    static let hostileSummaryJSON = """
        {"app":"com.example.notes\\u001b[2J","channel":"stable\\u0007","devices":2,"generated":"2026-11-25T12:00:00Z",\
        "rollouts":[{"rollout":{"paused":false,"percent":50},"time":"2026-11-25T10:00:00Z","version":"1.1.0\u{9b}2J"}],\
        "silent":[{"device":"0123456789abcdef0123456789abcdef","lastSeen":"2026-11-24T09:00:00Z","running":"1.0.0\u{9b}31m\u{202e}"}],\
        "silentDevices":1,"timeline":[{"devices":{"1.1.0\u{9b}2J":1},"time":"2026-11-25T12:00:00Z"}],\
        "versions":[{"blacklists":{},"commits":0,"devicesNow":1,"downloadFailures":{"net\\u001b[2Jwork":1},"failureRate":1,\
        "installs":1,"refusals":{},"rollbacks":{"timed-out\u{202e}\\u0007":1},"trials":1,"version":"1.1.0\u{9b}2J",\
        "webProcessDeaths":{}}],"windowSeconds":3600}
        """

    @Test func fleetStatusPrintsNoControlOrBidiCharacterOfTheSummary() async throws {
        let dir = try TemporaryDirectory("fleet-escapes")
        let collector = try LoopbackHTTPServer { _ in .text(Self.hostileSummaryJSON, contentType: "application/json") }
        let text = try await Self.status(collector.baseURL.absoluteString, dir)
        #expect(text.status == 0, "\(text.errorOutput)")
        #expect(Self.isClean(text.output), "\(text.output.debugDescription)")
        for shown in ["com.example.notes\\u{1b}[2J", "1.1.0\\u{9b}2J", "1.0.0\\u{9b}31m\\u{202e}"] {
            #expect(text.output.contains(shown), "\(shown): \(text.output)")
        }
        // --json: the same JSON value, with those characters as \u escapes.
        let json = try await Self.status(collector.baseURL.absoluteString, dir, ["--json"])
        #expect(json.status == 0, "\(json.errorOutput)")
        #expect(Self.isClean(json.output), "\(json.output.debugDescription)")
        let printed = try JSONSerialization.jsonObject(with: json.stdout) as? NSDictionary
        let sent = try JSONSerialization.jsonObject(with: Data(Self.hostileSummaryJSON.utf8)) as? NSDictionary
        #expect(printed != nil && printed == sent)
    }

    /// A summary naming a silent device by a text that is no device id (here with terminal
    /// escapes in it) is not a fleet summary: refused with 65, naming the field, the text
    /// itself not printed.
    @Test func aSummaryWithAnInventedDeviceIdIsRefusedNamingTheField() async throws {
        let dir = try TemporaryDirectory("fleet-escapes")
        let hostile = Self.hostileSummaryJSON.replacingOccurrences(
            of: "0123456789abcdef0123456789abcdef", with: "0123\\u001b]0;owned\\u0007cdef\u{202e}fedc")
        let collector = try LoopbackHTTPServer { _ in .text(hostile, contentType: "application/json") }
        let run = try await Self.status(collector.baseURL.absoluteString, dir)
        #expect(run.status == 65, "\(run.errorOutput)")
        #expect(run.output.isEmpty && Self.isClean(run.errorOutput), "\(run.errorOutput.debugDescription)")
        #expect(run.errorOutput.contains("is not a fleet summary") && run.errorOutput.contains("silent[0].device"), "\(run.errorOutput)")
        #expect(run.errorOutput.contains("not a device id"), "\(run.errorOutput)")
    }

    /// The collector's `{"error": …}` line in a refusal is printed on stderr, escaped.
    @Test func aCollectorsErrorLineIsPrintedEscaped() async throws {
        let dir = try TemporaryDirectory("fleet-escapes")
        let body = "{\"error\":\"wrong read token\\u001b[2J\\u0007 \u{9b}31m \u{202e}nekot\"}"
        let collector = try LoopbackHTTPServer { _ in .text(body, status: 401, contentType: "application/json") }
        let run = try await Self.status(collector.baseURL.absoluteString, dir)
        #expect(run.status == 78, "\(run.errorOutput)")
        #expect(Self.isClean(run.errorOutput), "\(run.errorOutput.debugDescription)")
        #expect(run.errorOutput.contains("wrong read token\\u{1b}[2J\\u{7} \\u{9b}31m \\u{202e}nekot"), "\(run.errorOutput)")
    }

    /// A collector that refuses a device's batch with such an error line: the device stores
    /// it as the last delivery failure, and `clientctl status` shows it escaped.
    @Test func aDevicesStatusShowsTheCollectorsErrorEscaped() async throws {
        let f = try DeviceFixture()
        let stub = try ReportCollectorStub()
        let error = "batch refused\u{1b}[2J\u{07} \u{9b}31m \u{202e}txt.exe"
        let body = String(decoding: try JSONSerialization.data(withJSONObject: ["error": error]), as: UTF8.self)
        stub.script([], otherwise: .status(400, headers: ["Content-Type": "application/json"], body: body))
        f.config.reportURL = stub.baseURL
        try f.config.save(f.layout)
        try f.publish("1.0.0")
        ReportJournal(layout: f.layout).record(ReportDraft(.start, running: "seed"))
        let install = try await ClientctlBinary.run(["install", "--root", f.layout.root])
        #expect(install.status == 0, "\(install.errorOutput)")
        #expect(stub.received.count >= 1, "it tried")
        let failure = try #require(ReportJournal(layout: f.layout).status.lastAttempt?.failure)
        // Controls become spaces as the device records the line (FleetReport.clip), so no
        // reader of state.json (status --json included) gets them.
        #expect(!failure.unicodeScalars.contains { $0.value < 0x20 || (0x7f...0x9f).contains($0.value) || $0 == "\u{202e}" })
        #expect(failure.contains("batch refused [2J"), "\(failure.debugDescription)")

        let status = try await ClientctlBinary.run(["status", "--root", f.layout.root])
        #expect(status.status == 0, "\(status.errorOutput)")
        #expect(Self.isClean(status.output), "\(status.output.debugDescription)")
        #expect(status.output.contains("refused the batch with 400: batch refused"), "\(status.output)")
        #expect(status.output.contains(" 31m  txt.exe"), "\(status.output)")
        let explained = try await ClientctlBinary.run(["status", "--root", f.layout.root, "--explain"])
        #expect(explained.status == 0 && Self.isClean(explained.output), "\(explained.output.debugDescription)")
    }
}

import FleetReports
import Foundation
import TestSupport
import Testing

/// `clientctl fleet problems`, the real binary: the table and messages from a real
/// collector, `--json` as it came, and a hostile collector's answer refused (exit 65) with
/// one line that acts on no terminal.
@Suite struct ProblemsCommandTests {
    typealias F = CollectorFixtures

    static func base(_ collector: String, _ tokenFile: String) -> [String] {
        ["fleet", "problems", "--collector", collector, "--token-file", tokenFile, "--app", F.app, "--channel", F.channel]
    }

    @Test func printsEachVersionsKindsAndMessages() async throws {
        let dir = try TemporaryDirectory("problems-command")
        let collector = try await ProblemsRouteTests.collector("sqlite", dir, name: "")
        let now = Date().timeIntervalSince1970
        try await ProblemsRouteTests.post(collector, ProblemsRouteTests.fleet(now: now))
        let markup = "<b>bold</b> & \u{200B}"
        let kept = ProblemsRouteTests.report(1, .pageErrors, ago: 60, now: now, running: "1.3.0", version: "1.3.0", count: 1, detail: markup)
        try await ProblemsRouteTests.post(collector, [F.batch(device: 9, [kept])])

        let text = try await ClientctlBinary.run(Self.base(collector.baseURL, collector.tokenPath) + ["--versions", "3"])
        #expect(text.status == 0, "\(text.errorOutput)")
        let lines = text.output.split(separator: "\n", omittingEmptySubsequences: false).map { $0.split(separator: " ").joined(separator: " ") }
        #expect(lines.first?.hasPrefix("\(F.app) · \(F.channel): problems within 1 d before ") == true, "\(text.output)")
        let table = [
            "VERSION KIND REASON EVENTS DEVICES",
            "1.3.0 page-errors – 1 1",
            "1.2.0 download-failed network 2 1",
            "1.2.0 download-failed hash-mismatch 1 1",
            "1.1.0 page-errors – 15 2",
            "1.1.0 rolled-back timed-out 2 2",
            "1.1.0 web-process-died crashed 2 1",
            "1.1.0 rolled-back page-crashed 1 1",
        ]
        #expect(Array(lines.dropFirst().prefix(table.count)) == table, "\(text.output)")
        #expect(text.output.contains("Messages of 1.3.0 (reports that kept each):\n  1  \(markup)\n"), "\(text.output)")
        let typeError = "  2  \(ProblemsRouteTests.typeError)\n  1  \(ProblemsRouteTests.referenceError)\n"
        #expect(text.output.contains("Messages of 1.1.0 (reports that kept each):\n" + typeError), "\(text.output)")
        #expect(!text.output.contains("1.0.0"), "--versions 3: the three newest")

        let json = try await ClientctlBinary.run(Self.base(collector.baseURL, collector.tokenPath) + ["--json", "--window", "1h"])
        #expect(json.status == 0, "\(json.errorOutput)")
        let answer = try ProblemSummary.decode(json.stdout)
        #expect(answer.windowSeconds == 3_600 && answer.versions.map(\.version) == ["1.3.0", "1.2.0", "1.1.0", "1.0.0"])

        let refused = try await ClientctlBinary.run(Self.base(collector.baseURL, dir("no-token")))
        #expect(refused.status == 66, "\(refused.errorOutput)")
        try "wrong-token-0123456789\n".write(toFile: dir("wrong.token"), atomically: true, encoding: .utf8)
        let wrong = try await ClientctlBinary.run(Self.base(collector.baseURL, dir("wrong.token")))
        #expect(wrong.status == 78, "\(wrong.errorOutput)")
        let bad = try await ClientctlBinary.run(Self.base(collector.baseURL, collector.tokenPath) + ["--versions", "21"])
        #expect(bad.status == 64 && bad.errorOutput.contains("--versions must be 1 to 20, not 21"), "\(bad.errorOutput)")
        #expect(collector.stop() == 0)
    }

    @Test func aHostileCollectorsAnswerIsRefused() async throws {
        let dir = try TemporaryDirectory("problems-hostile-collector")
        try "token-0123456789abcdef\n".write(toFile: dir("read.token"), atomically: true, encoding: .utf8)
        let hostile = #"""
            {"app":"com.example.notes","channel":"stable","generated":"2026-11-29T18:00:00Z","windowSeconds":86400,
             "versions":[{"version":"1.0.0","problems":[{"kind":"page-errors","count":1,"devices":1,
               "messages":[{"message":"\u001b]0;owned\u0007\u001b[2J","count":1}]}]}]}
            """#
        let server = try LoopbackHTTPServer { _ in .text(hostile, contentType: "application/json") }
        defer { server.stop() }
        let run = try await ClientctlBinary.run(Self.base(server.baseURL.absoluteString, dir("read.token")))
        #expect(run.status == 65, "\(run.errorOutput)")
        #expect(run.errorOutput.contains("the answer is not a problem summary"), "\(run.errorOutput)")
        #expect(run.errorOutput.contains("messages[0].message: has control characters"), "\(run.errorOutput)")
        #expect(!run.errorOutput.contains("\u{1b}") && !run.errorOutput.contains("\u{07}") && run.stdout.isEmpty)
    }
}

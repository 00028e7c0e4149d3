import ClientFoundation
import ClientUpdater
import ClientUpdaterHTTP
import DeviceIdentity
import FleetReports
import Foundation
import Synchronization
import TestSupport
import Testing

@testable import ClientEngine

/// Errors after start travel within the quiet day's budget (docs/page-errors.md#periods-and-reports,
/// docs/fleet-reports.md#delivery: about 2 KiB per device per day): a screen whose page is
/// on screen all day, counted by `ProblemTally`, its `page-errors` reports recorded in a real
/// journal and sent by the real sender to a collector on 127.0.0.1, with hourly checks
/// applying the heartbeat rule. Bytes are counted as HTTP/1.1 carries them.
@Suite struct PageErrorsBudgetTests {
    final class Clock: Sendable {
        private let wall = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
        var now: Date { wall.withLock { $0 } }
        func advance(_ seconds: TimeInterval) { wall.withLock { $0 = $0.addingTimeInterval(seconds) } }
    }

    static func wireBytes(_ post: ReportCollectorStub.Received) -> Int {
        let head = "POST /v1/reports HTTP/1.1\r\n" + post.headers.map { "\($0.key): \($0.value)\r\n" }.joined() + "\r\n"
        let answer = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 29\r\n\r\n" + #"{"accepted":1,"duplicates":0}"#
        return head.utf8.count + post.body.count + answer.utf8.count
    }

    /// Three days of a page on screen: the version's first hour, then steady use; an error
    /// now and then (`erroring` hours of the 72 have one).
    static func threeDays(erroring: Set<Int>) async throws -> (perDay: Double, requests: Int, reports: [ReportKind: Int]) {
        let tmp = try TemporaryDirectory("page-errors-budget")
        let layout = RootLayout(root: tmp("root"))
        try FileManager.default.createDirectory(atPath: layout.root, withIntermediateDirectories: true)
        let stub = try ReportCollectorStub()
        let clock = Clock()
        var options = ReportSender.Options()
        options.now = { clock.now }
        let journal = ReportJournal(layout: layout, now: { clock.now })
        let sender = ReportSender(
            source: journal, identity: ReportIdentity(device: DeviceID.random(), app: "com.example.notes", channel: "stable"),
            url: try #require(URL(string: stub.baseURL)), transport: DefaultTransport(settings: HTTPTransportSettings()), options: options)
        var tally = ProblemTally()
        var reports: [ReportKind: Int] = [:]
        func record(_ outputs: [ProblemTally.Output]) {
            for case .report(let draft) in outputs {
                journal.record(draft)
                reports[draft.type, default: 0] += 1
            }
        }
        record(tally.acknowledged("1.1.0", at: .zero))
        // Quarter-hour steps: a load each, the page's errors, the periods' ends; the hourly
        // check's heartbeat rule; the sender wakes for each.
        for quarter in 1...(72 * 4) {
            clock.advance(900)
            let t = Duration.seconds(quarter * 900)
            record(tally.acknowledged("1.1.0", at: t))
            if quarter % 4 == 0, erroring.contains(quarter / 4) {
                record(tally.problems(1, messages: ["TypeError: x @ /app.js:1"], version: "1.1.0", at: t))
            }
            record(tally.due(at: t))
            if quarter % 4 == 0, HeartbeatRule.isDue(lastRecorded: journal.lastRecordedAt(), now: clock.now) {
                journal.record(ReportDraft(.heartbeat, running: "1.1.0"))
                reports[.heartbeat, default: 0] += 1
            }
            for attempt in await sender.flush(within: .seconds(30)) {
                if case .failed(_, let why) = attempt { Issue.record("quarter \(quarter): \(why)") }
            }
        }
        let total = stub.received.reduce(0) { $0 + wireBytes($1) }
        return (Double(total) / 3, stub.received.count, reports)
    }

    @Test func aScreenOnAllDayStaysWithinTheQuietDaysBudget() async throws {
        let quiet = try await Self.threeDays(erroring: [])
        print("PageErrorsBudgetTests: quiet: \(Int(quiet.perDay)) bytes a day, \(quiet.requests) requests in 3 days, \(quiet.reports)")
        #expect(quiet.perDay <= 2048, "\(quiet.perDay) bytes a day")
        #expect(quiet.reports[.heartbeat, default: 0] == 0, "page-errors reports say the device is there: no heartbeat needed")
        // The first hour's reports (seen at quarter-hour steps, the 5-minute period ends with
        // the 15-minute one), then one at 1 h and one per 6 hours of use after it.
        #expect(quiet.reports[.pageErrors] == 1 + 12, "\(quiet.reports)")

        // An error every 12 hours: those periods go at once, still within the budget.
        let some = try await Self.threeDays(erroring: [5, 17, 29, 41, 53, 65])
        print("PageErrorsBudgetTests: an error every 12 h: \(Int(some.perDay)) bytes a day, \(some.requests) requests in 3 days")
        #expect(some.perDay <= 2048, "\(some.perDay) bytes a day")
    }
}

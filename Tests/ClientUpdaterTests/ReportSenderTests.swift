import ClientFoundation
import ClientUpdater
import ClientUpdaterHTTP
import DeviceIdentity
import DeviceTargeting
import FleetReports
import Foundation
import TestSupport
import Testing

/// The sender against a real server on 127.0.0.1 over the production transport, with a real
/// journal in a temp dir: what reaches the collector, what leaves the journal, and what the
/// collector's answers (500, 429, a lost reply, a refusal, silence) do.
@Suite struct ReportSenderTests {
    static let device = DeviceID("0123456789abcdef0123456789abcdef") ?? .random()

    /// The production options but for one request's bounds: a full suite on 2 cores once
    /// starved these requests past the 20 s limit (a CI run), which is not what they test.
    /// `aSlowCollectorIsCutAtTheBound` keeps the production bounds.
    static func options() -> ReportSender.Options {
        var options = ReportSender.Options()
        options.timeLimit = .seconds(120)
        options.idleTimeout = .seconds(60)
        return options
    }

    struct Rig {
        let tmp: TemporaryDirectory
        let journal: ReportJournal
        let layout: RootLayout

        init() throws {
            tmp = try TemporaryDirectory("reports")
            layout = RootLayout(root: tmp("root"))
            try FileManager.default.createDirectory(atPath: layout.root, withIntermediateDirectories: true)
            journal = ReportJournal(layout: layout)
        }

        func record(_ count: Int, _ type: ReportKind = .committed) {
            for _ in 0..<count { journal.record(ReportDraft(type, running: "1.1.0", version: "1.1.0")) }
        }

        /// A journal and a sender of this root on the wall clock `clock`.
        func clocked(_ url: String, _ clock: WallClock) throws -> (ReportJournal, ReportSender) {
            var options = ReportSenderTests.options()
            options.now = { clock.now }
            let journal = ReportJournal(layout: layout, now: { clock.now })
            let sender = ReportSender(
                source: journal, identity: ReportIdentity(device: ReportSenderTests.device, app: "com.example.notes", channel: "stable"),
                url: try #require(URL(string: url)), transport: DefaultTransport(settings: HTTPTransportSettings()), options: options)
            return (journal, sender)
        }

        func sender(_ url: String, options: ReportSender.Options = ReportSenderTests.options()) throws -> ReportSender {
            ReportSender(
                source: journal, identity: ReportIdentity(device: ReportSenderTests.device, app: "com.example.notes", channel: "stable"),
                url: try #require(URL(string: url)), transport: DefaultTransport(settings: HTTPTransportSettings()), options: options,
                refusalFile: layout.root + "/" + ReportSender.refusalFileName)
        }
    }

    /// The batch in a request's body, decompressed by the `zstd` command-line tool (the
    /// reference implementation's own decoder), then read by the collector's strict reader.
    static func batch(_ received: ReportCollectorStub.Received) throws -> ReportBatch {
        #expect(received.headers["content-encoding"] == "zstd")
        #expect(received.headers["content-type"] == "application/json")
        let plain = try Subprocess.run("/usr/bin/zstd", ["-d", "-c", "-q"], input: received.body)
        #expect(plain.status == 0, "\(plain.errorOutput)")
        return try ReportBatch.decode(plain.stdout)
    }

    @Test func aBatchIsDeliveredCompressedAndLeavesTheJournal() async throws {
        let rig = try Rig()
        let stub = try ReportCollectorStub()
        rig.record(3)
        let result = try await rig.sender(stub.baseURL).attempt()
        #expect(result == .delivered(count: 3, through: 3, more: false))
        #expect(rig.journal.pending(maxReports: 500, maxBytes: 1 << 20).isEmpty)
        #expect(rig.journal.status.lastSuccess != nil)
        let posts = stub.received
        #expect(posts.count == 1 && posts.first?.method == "POST" && posts.first?.path == "/v1/reports")
        let batch = try Self.batch(try #require(posts.first))
        #expect(batch.device == Self.device && batch.app == "com.example.notes" && batch.channel == "stable")
        #expect(batch.reports.map(\.seq) == [1, 2, 3])
        #expect(batch.reports.allSatisfy { $0.type == .committed && $0.version == "1.1.0" })
    }

    @Test func nothingPendingSendsNothing() async throws {
        let rig = try Rig()
        let stub = try ReportCollectorStub()
        #expect(try await rig.sender(stub.baseURL).flush(within: .seconds(3)) == [.nothingPending])
        #expect(stub.received.isEmpty)
    }

    @Test func aCollectorThatIsDownLosesNothingAndGetsItLater() async throws {
        let rig = try Rig()
        rig.record(2)
        let refusing = try LoopbackHTTPServer.refusingPort()
        let down = try await rig.sender("http://127.0.0.1:\(refusing.port)/").flush(within: .seconds(3))
        guard case .failed(.failed, let why) = down.first else {
            Issue.record("\(down)")
            return
        }
        #expect(why.contains("refused"), "\(why)")
        #expect(rig.journal.pending(maxReports: 500, maxBytes: 1 << 20).count == 2)
        #expect(rig.journal.status.lastAttempt?.failure?.contains("refused") == true, "status says why")
        rig.record(1)
        let stub = try ReportCollectorStub()
        let later = try await rig.sender(stub.baseURL).flush(within: .seconds(5))
        #expect(later == [.delivered(count: 3, through: 3, more: false)])
        #expect(try Self.batch(try #require(stub.received.first)).reports.map(\.seq) == [1, 2, 3])
    }

    @Test func a500ThenSuccess() async throws {
        let rig = try Rig()
        rig.record(2)
        let stub = try ReportCollectorStub()
        stub.script([.status(500, body: #"{"error": "the store is on fire"}"#)])
        let sender = try rig.sender(stub.baseURL)
        let first = await sender.attempt()
        #expect(first == .failed(.failed, why: #"the collector answered 500: the store is on fire"#))
        #expect(rig.journal.pending(maxReports: 500, maxBytes: 1 << 20).count == 2)
        #expect(await sender.attempt() == .delivered(count: 2, through: 2, more: false))
        #expect(stub.received.count == 2)
    }

    @Test(arguments: [429, 503])
    func busyWithRetryAfterIsHonoured(status: Int) async throws {
        let rig = try Rig()
        rig.record(1)
        let stub = try ReportCollectorStub()
        stub.script([.status(status, headers: ["Retry-After": "1200"], body: #"{"error": "slow down"}"#)])
        let now = Duration.seconds(5000)
        var options = Self.options()
        let manual = ManualClock()
        options.clock = MonotonicClock(manual)
        await manual.advance(by: now)
        let sender = try rig.sender(stub.baseURL, options: options)
        let result = await sender.attempt()
        #expect(result == .failed(.busy(retryAfter: .seconds(1200)), why: "the collector answered \(status) (busy): slow down"))
        #expect(sender.due == now + .seconds(1200), "the next attempt waits what the collector asked")
        #expect(rig.journal.pending(maxReports: 500, maxBytes: 1 << 20).count == 1)
    }

    /// At-least-once: the collector stored the batch but its answer was lost; the device
    /// sends it again, and the collector (by (device, seq)) keeps one copy of each.
    @Test func aLostReplyMeansTheSameReportsAgainNeverNewOnes() async throws {
        let rig = try Rig()
        rig.record(3)
        let stub = try ReportCollectorStub()
        stub.script([.hangUp])
        let sender = try rig.sender(stub.baseURL)
        guard case .failed(.failed, _) = await sender.attempt() else {
            Issue.record("a hang-up is a failure")
            return
        }
        rig.record(1)
        #expect(await sender.attempt() == .delivered(count: 4, through: 4, more: false))
        let batches = try stub.received.map(Self.batch)
        #expect(batches.map { $0.reports.map(\.seq) } == [[1, 2, 3], [1, 2, 3, 4]])
        var stored: [String: FleetReport] = [:]
        for batch in batches {
            for report in batch.reports { stored["\(batch.device)/\(report.seq)"] = stored["\(batch.device)/\(report.seq)"] ?? report }
        }
        #expect(stored.count == 4, "one report per (device, seq)")
        #expect(batches[0].reports == Array(batches[1].reports.prefix(3)), "a resent report is the same report")
    }

    @Test func aBatchRefusedThreeTimesIsDroppedAndSaidSo() async throws {
        let rig = try Rig()
        rig.record(2)
        let stub = try ReportCollectorStub()
        stub.script([], otherwise: .status(400, body: #"{"error": "reports[0].version: not a version"}"#))
        // Three separate processes' worth of senders: the count survives in the root.
        for round in 1...2 {
            let result = try await rig.sender(stub.baseURL).attempt()
            #expect(result == .failed(.refused(firstSeq: 1), why: "the collector refused the batch with 400: reports[0].version: not a version"))
            #expect(rig.journal.pending(maxReports: 500, maxBytes: 1 << 20).count == 2, "round \(round)")
        }
        let third = try await rig.sender(stub.baseURL).attempt()
        guard case .dropped(2, let why) = third else {
            Issue.record("\(third)")
            return
        }
        #expect(why.contains("dropped 2 reports") && why.contains("refused 3 times"), "\(why)")
        #expect(rig.journal.pending(maxReports: 500, maxBytes: 1 << 20).isEmpty)
        #expect(rig.journal.status.lastAttempt?.failure?.contains("dropped 2 reports") == true)
        #expect(rig.journal.status.dropped == 2, "status's dropped total counts a dropped batch's reports")
        rig.record(1)
        stub.script([], otherwise: .ok)
        #expect(try await rig.sender(stub.baseURL).attempt() == .delivered(count: 1, through: 3, more: false))
    }

    /// The journal with labels, as a device's config gives them.
    struct Labelled: ReportSource {
        let journal: ReportJournal
        func pending(maxReports: Int, maxBytes: Int) -> [FleetReport] { journal.pending(maxReports: maxReports, maxBytes: maxBytes) }
        func delivered(through seq: Int64, at: Date) { journal.delivered(through: seq, at: at) }
        func deliveryFailed(at: Date, reason: String) { journal.deliveryFailed(at: at, reason: reason) }
        func dropped(_ count: Int, through seq: Int64, at: Date, reason: String) { journal.dropped(count, through: seq, at: at, reason: reason) }
        func stream() -> String { journal.stream() }
        func labels() -> DeviceLabels? { try? DeviceLabels(["store": "12"]) }
    }

    /// A collector older than labels refuses the member (its strict reader: "unknown
    /// field"): the same reports go again without the labels and are delivered, none lost.
    @Test func aCollectorThatRefusesLabelsGetsTheReportsWithoutThem() async throws {
        let rig = try Rig()
        rig.record(2)
        let stub = try ReportCollectorStub()
        stub.script([.status(400, body: #"{"error": "labels: unknown field"}"#)], otherwise: .ok)
        let sender = ReportSender(
            source: Labelled(journal: rig.journal), identity: ReportIdentity(device: Self.device, app: "com.example.notes", channel: "stable"),
            url: try #require(URL(string: stub.baseURL)), transport: DefaultTransport(settings: HTTPTransportSettings()), options: Self.options())
        #expect(try await sender.attempt() == .delivered(count: 2, through: 2, more: false))
        let received = stub.received
        #expect(received.count == 2, "the refused batch, then the same reports without labels")
        let batches = try received.map(Self.batch)
        #expect(batches.first?.labels == (try DeviceLabels(["store": "12"])) && batches.last?.labels.isEmpty == true)
        #expect(batches.first?.reports == batches.last?.reports)
        #expect(rig.journal.pending(maxReports: 500, maxBytes: 1 << 20).isEmpty)
    }

    @Test func aSlowCollectorIsCutAtTheBound() async throws {
        let rig = try Rig()
        rig.record(1)
        let stub = try ReportCollectorStub()
        stub.script([.after(seconds: 60, .ok)])
        let start = ContinuousClock.now
        let result = try await rig.sender(stub.baseURL, options: ReportSender.Options()).flush(within: .seconds(2))
        #expect(ContinuousClock.now - start < .seconds(30), "bounded: the collector answers after 60 s")
        guard case .failed(.failed, _) = result.first else {
            Issue.record("\(result)")
            return
        }
        #expect(rig.journal.pending(maxReports: 500, maxBytes: 1 << 20).count == 1, "still pending")
    }

    @Test func aRedirectIsNotFollowed() async throws {
        let rig = try Rig()
        rig.record(1)
        let stub = try ReportCollectorStub()
        stub.script([.status(307, headers: ["Location": "http://127.0.0.1:1/elsewhere"])])
        let result = try await rig.sender(stub.baseURL).attempt()
        guard case .failed(.failed, let why) = result else {
            Issue.record("\(result)")
            return
        }
        #expect(why.contains("307") && why.contains("not redirected"), "\(why)")
        #expect(stub.received.count == 1)
    }

    /// What one exchange costs on the wire: the request line, the headers AsyncHTTPClient
    /// sent, the body; and what came back (the stub's answer is the collector's size).
    static func wireBytes(_ post: ReportCollectorStub.Received) -> Int {
        let head = "POST /v1/reports HTTP/1.1\r\n" + post.headers.map { "\($0.key): \($0.value)\r\n" }.joined() + "\r\n"
        let answer = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 29\r\n\r\n" + #"{"accepted":1,"duplicates":0}"#
        return head.utf8.count + post.body.count + answer.utf8.count
    }

    /// The goal: ≤ 2 KiB a day when nothing happens. A quiet device records a heartbeat every
    /// 6 hours (HeartbeatRule.interval) and checks every hour; heartbeats wait for company up
    /// to 12 hours, so three days of them go in a few requests, none of them later than the
    /// hold.
    @Test func aQuietDaySendsLessThanTwoKiB() async throws {
        let rig = try Rig()
        let stub = try ReportCollectorStub()
        let clock = WallClock()
        let (journal, sender) = try rig.clocked(stub.baseURL, clock)
        var lastDelivered = 0
        for hour in 0..<72 {
            if HeartbeatRule.isDue(lastRecorded: journal.lastRecordedAt(), now: clock.now) {
                journal.record(ReportDraft(.heartbeat, running: "1.1.0", shell: "2.1.0"))
            }
            for attempt in await sender.flush(within: .seconds(30)) {
                if case .delivered(_, let through, _) = attempt { lastDelivered = Int(through) }
                if case .failed(_, let why) = attempt { Issue.record("hour \(hour): \(why)") }
            }
            // Nothing recorded waits longer than the hold (12 h) before it is sent.
            let oldest = journal.pending(maxReports: 1, maxBytes: 1 << 20).first
            #expect(oldest.map { clock.now.timeIntervalSince($0.time) < 12 * 3600 } ?? true, "hour \(hour)")
            clock.advance(3600)
        }
        #expect(lastDelivered >= 10, "12 heartbeats in three days, most of them delivered: \(lastDelivered)")
        let total = stub.received.reduce(0) { $0 + Self.wireBytes($1) }
        let perDay = Double(total) / 3
        let batches = try stub.received.map { try Self.batch($0).reports.count }
        print("ReportSenderTests: three quiet days = \(stub.received.count) requests (reports \(batches)), \(Int(perDay)) bytes a day on the wire")
        #expect(perDay <= 2048, "\(perDay) bytes a day")
        #expect(batches.allSatisfy { $0 >= 2 }, "every request carries more than one heartbeat: \(batches)")
    }

    /// A hold that ends less than a millisecond from now makes the next attempt a
    /// millisecond away, never due at once: the sender's loop would read and parse its
    /// journal again and again until the hold's end. The simulator's agents' world, whose
    /// time moves only when every task waits, met the loop that never waited
    /// (docs/simulation.md#the-agents-world).
    @Test func aHoldThatEndsWithinTheMillisecondIsNotDueAtOnce() async throws {
        let rig = try Rig()
        let stub = try ReportCollectorStub()
        let wall = WallClock()
        let manual = ManualClock()
        var options = Self.options()
        options.now = { wall.now }
        options.clock = MonotonicClock(manual)
        let journal = ReportJournal(layout: rig.layout, now: { wall.now })
        let sender = ReportSender(
            source: journal, identity: ReportIdentity(device: Self.device, app: "com.example.notes", channel: "stable"),
            url: try #require(URL(string: stub.baseURL)), transport: DefaultTransport(settings: HTTPTransportSettings()), options: options)
        journal.record(ReportDraft(.heartbeat, running: "1.0.0"))
        let stamped = try #require(journal.pending(maxReports: 1, maxBytes: 1 << 20).first).time
        let until = stamped.addingTimeInterval(12 * 3600)
        wall.jump(until.timeIntervalSince(wall.now) - 0.0004)
        #expect(await sender.attempt() == .held(until: until))
        #expect(try #require(sender.due) >= .milliseconds(1), "due a millisecond on, not at once (\(String(describing: sender.due)))")
        #expect(stub.received.isEmpty)
    }

    /// A heartbeat and a rollout wait are held; the next report that matters takes them along
    /// in the same request (docs/fleet-reports.md#delivery).
    @Test func reportsThatCanWaitGoWithTheNextThatMatters() async throws {
        let rig = try Rig()
        let stub = try ReportCollectorStub()
        let clock = WallClock()
        let (journal, sender) = try rig.clocked(stub.baseURL, clock)
        let recorded = clock.now
        journal.record(ReportDraft(.heartbeat, running: "1.0.0"))
        clock.advance(600)
        journal.record(ReportDraft(.checkRefused, running: "1.0.0", version: "1.1.0", reason: .rollout, detail: "place 71 of 100"))
        #expect(await sender.flush(within: .seconds(30)) == [.held(until: recorded.addingTimeInterval(12 * 3600))])
        #expect(stub.received.isEmpty, "nothing sent for a heartbeat and a wait")
        #expect(sender.due != nil, "a running sender wakes at the hold's end")
        clock.advance(600)
        journal.record(ReportDraft(.installed, running: "1.0.0", version: "1.1.0"))
        #expect(await sender.flush(within: .seconds(30)) == [.delivered(count: 3, through: 3, more: false)])
        let batch = try Self.batch(try #require(stub.received.first))
        #expect(stub.received.count == 1 && batch.reports.map(\.type) == [.heartbeat, .checkRefused, .installed])
    }
}

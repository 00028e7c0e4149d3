import AuthenticatedTime
import Foundation
import Synchronization
import TestSupport
import Testing

@testable import ClientUpdater

/// The device's time (docs/device-time.md): the rule of what a device decides by, on
/// injected clocks, and the floor kept in `time.json`, which only ever moves forward.
struct DeviceClockTests {
    static let floor = Date(timeIntervalSince1970: 1_800_000_000)
    static let day: TimeInterval = 86_400

    /// Every row of the rule's table (docs/device-time.md#the-rule).
    @Test(
        arguments: [
            // wall, interval, trusted, verdict
            (floor + 10, nil, floor + 10, ClockVerdict.trusted),
            (floor - 60, nil, floor, .trusted),  // a minute behind: two machines' clocks, not a wrong one
            (floor - day, nil, floor, .behindFloor),
            (Date(timeIntervalSince1970: 86_400), nil, floor, .behindFloor),  // a board booting in 1970
            (floor + 3_600, (floor + 3_590)...(floor + 3_610), floor + 3_600, .trusted),
            (floor + 100 * day, (floor + 3_590)...(floor + 3_610), floor + 3_610, .aheadOfAuthenticated),
            (floor - 30 * 365 * day, (floor + 3_590)...(floor + 3_610), floor + 3_590, .behindAuthenticated),
            (floor + 10, (floor - 2 * day)...(floor - day), floor - day, .floorAheadOfAuthenticated),
        ] as [(Date, ClosedRange<Date>?, Date, ClockVerdict)])
    func theRuleDecidesByTheTimeTheDeviceCanTrust(wall: Date, interval: ClosedRange<Date>?, trusted: Date, verdict: ClockVerdict) {
        let judged = ClockJudgement.judge(wall: wall, floor: Self.floor, authenticated: interval)
        #expect(judged.trusted == trusted && judged.verdict == verdict, "\(judged)")
    }

    /// Clocks a test moves: the wall clock jumps, uptime only advances.
    final class Clocks: Sendable {
        let state: Mutex<ClockReading>
        init(wall: Date, boot: String = "boot-1") { state = Mutex(ClockReading(wall: wall, uptime: .seconds(1_000), bootID: boot)) }
        func read() -> ClockReading { state.withLock { $0 } }
        func jump(_ seconds: TimeInterval) { state.withLock { $0.wall += seconds } }
        func pass(_ seconds: Int64) {
            state.withLock {
                $0.wall += TimeInterval(seconds)
                $0.uptime += .seconds(seconds)
            }
        }
        func reboot(wall: Date) { state.withLock { $0 = ClockReading(wall: wall, uptime: .seconds(5), bootID: "boot-2") } }
    }

    @Test func theFloorOnlyMovesForwardAndOutlivesTheProcess() throws {
        let tmp = try TemporaryDirectory("clock")
        let layout = RootLayout(root: tmp.path)
        let clocks = Clocks(wall: Date(timeIntervalSince1970: 86_400))  // 1970-01-02
        let clock = DeviceClock(layout: layout, clocks: { clocks.read() }, programDate: Self.floor)
        #expect(clock.now() == Self.floor, "no record yet: the program's date is the floor")
        #expect(clock.status().verdict == .behindFloor)
        #expect(clock.status().floorSource == "the release date of this clientctl")

        clock.witness(Self.floor + Self.day + 0.75, source: "release 1.2.0 published")
        #expect(clock.now() == Self.floor + Self.day, "whole seconds, rounded down")
        clock.witness(Self.floor + 10, source: "release 1.1.0 published")
        #expect(clock.status().floorSource == "release 1.2.0 published", "an older signed time never lowers the floor")

        // Another process (a new clock on the same root) finds it, whatever its wall clock says.
        let later = Clocks(wall: Self.floor + 400 * Self.day)
        let other = DeviceClock(layout: layout, clocks: { later.read() }, programDate: Self.floor)
        #expect(other.status().floor == Self.floor + Self.day)
        #expect(other.now() == Self.floor + 400 * Self.day && other.status().verdict == .trusted)
        // The wall clock is never a witness: 400 days ahead did not move the floor.
        #expect(DeviceClock(layout: layout, clocks: { clocks.read() }, programDate: Self.floor).now() == Self.floor + Self.day)

        // A raise by one process reaches another that already read the record.
        other.witness(Self.floor + 2 * Self.day, source: "the rollout role's restriction of release 1.2.0 issued")
        #expect(clock.now() == Self.floor + 2 * Self.day)
    }

    @Test func aTornOrForeignRecordFallsBackToTheProgramsDate() throws {
        let tmp = try TemporaryDirectory("clock-torn")
        let layout = RootLayout(root: tmp.path)
        let clocks = Clocks(wall: Date(timeIntervalSince1970: 0))
        for bytes in [
            "{\"format\":\"clientctl-time-v1\",\"floor\":", "[]", "{\"format\":\"other\",\"floor\":\"2090-01-01T00:00:00Z\",\"floorSource\":\"x\"}",
        ] {
            try Data(bytes.utf8).write(to: URL(fileURLWithPath: tmp("time.json")))
            let clock = DeviceClock(layout: layout, clocks: { clocks.read() }, programDate: Self.floor)
            #expect(clock.now() == Self.floor, "\(bytes)")
            clock.witness(Self.floor + 5, source: "release 1.0.0 published")
            #expect(clock.now() == Self.floor + 5, "a raise rewrites it whole")
            #expect(TimeRecord.read(layout)?.floor == Self.floor + 5)
        }
    }

    /// An interval the time servers vouched for is carried forward on the monotonic clock:
    /// a wall clock that jumps by a day or 30 years afterwards is corrected, and in another
    /// boot only its earliest end (now the floor) remains.
    @Test func anAuthenticatedIntervalCorrectsAJumpingClockUntilTheNextBoot() throws {
        let tmp = try TemporaryDirectory("clock-authenticated")
        let layout = RootLayout(root: tmp.path)
        let truth = Self.floor + 30 * Self.day
        let clocks = Clocks(wall: truth)
        var record = TimeRecord(floor: Self.floor, floorSource: "release 1.0.0 published")
        record.authenticated = AuthenticatedTime(
            earliest: truth - 2, latest: truth + 2, obtainedAt: clocks.read(), agreeing: ["roughtime://127.0.0.1:2002"])
        try record.write(layout)
        let clock = DeviceClock(layout: layout, clocks: { clocks.read() }, programDate: Self.floor)
        #expect(clock.now() == truth && clock.status().verdict == .trusted)
        clocks.pass(60)
        clocks.jump(-Self.day)
        #expect(clock.now() == truth + 58, "a day back: the interval's earliest end, a minute on")
        #expect(clock.status().verdict == .behindAuthenticated)
        clocks.jump(Self.day + 30 * 365 * Self.day)
        #expect(clock.now() == truth + 62, "30 years ahead: the interval's latest end")
        #expect(clock.status().verdict == .aheadOfAuthenticated)
        #expect(clock.status().line.contains("ahead of the time servers'"), "\(clock.status().line)")
        clocks.reboot(wall: Date(timeIntervalSince1970: 3_600))
        #expect(clock.now() == Self.floor, "another boot: the uptimes do not compare, the floor holds")
        #expect(clock.status().authenticated == nil && clock.status().verdict == .behindFloor)
    }

    /// Issue 65: one configured server (quorum 1 of 1) answers 2019, long before this
    /// program was released. Its interval is not used and decisions never go below the
    /// program's date, in the rule and through the clock's own authentication; an interval
    /// that reaches past that date still corrects a wall clock into it, never below it.
    @Test func noServerAnswerTakesADeviceBelowItsProgramsDate() async throws {
        let in2019 = Date(timeIntervalSince1970: 1_560_000_000)
        let judged = ClockJudgement.judge(wall: Self.floor + 10, floor: Self.floor, authenticated: in2019...(in2019 + 2), programDate: Self.floor)
        #expect(judged.trusted == Self.floor + 10 && judged.verdict == .trusted, "\(judged)")
        let straddling = ClockJudgement.judge(
            wall: Date(timeIntervalSince1970: 0), floor: Self.floor, authenticated: (Self.floor - 20)...(Self.floor + 20), programDate: Self.floor)
        #expect(straddling.trusted == Self.floor, "\(straddling)")
        // A signed floor above the interval: the servers win, but not below the program's date.
        let signerAhead = ClockJudgement.judge(
            wall: Self.floor - Self.day, floor: Self.floor + 30 * Self.day, authenticated: (Self.floor - 20)...(Self.floor + 20),
            programDate: Self.floor)
        #expect(signerAhead.trusted == Self.floor, "\(signerAhead)")

        let tmp = try TemporaryDirectory("clock-2019")
        let clocks = Clocks(wall: Self.floor + 60)
        let server = try RoughtimeServer(host: "127.0.0.1", port: 2002, publicKey: [UInt8](repeating: 1, count: 32))
        let clock = DeviceClock(
            layout: RootLayout(root: tmp.path), clocks: { clocks.read() }, programDate: Self.floor, servers: [server], quorum: 1,
            query: { _, _, _ in
                AuthenticatedTime(earliest: in2019 - 1, latest: in2019 + 1, obtainedAt: clocks.read(), agreeing: ["roughtime://127.0.0.1:2002"])
            })
        let failure = await clock.authenticate()
        #expect(
            failure == "authenticated time: time servers roughtime://127.0.0.1:2002 vouch for 2019-06-08T13:19:59Z to 2019-06-08T13:20:01Z, "
                + "before the release date of this clientctl (2027-01-15T08:00:00Z): not used", "\(failure ?? "nil")")
        #expect(clock.now() == Self.floor + 60 && clock.status().authenticated == nil)
        #expect(clock.status().floor == Self.floor, "the floor is not lowered either")
    }

    /// Issue 75: `status` says who answered, who agreed, the quorum and the interval decided,
    /// or, when none was, which overlapped and why that was not enough. Three servers where
    /// two pairs overlap and the outer two do not (RoughtimeQuorumTests has the decision).
    @Test func statusNamesTheServersOfTheLastDecision() async throws {
        let truth = Self.floor + 30 * Self.day
        let clocks = Clocks(wall: truth)
        let servers = try (1...3).map { try RoughtimeServer(host: "127.0.0.\($0)", port: 2002, publicKey: [UInt8](repeating: 1, count: 32)) }
        let t = UInt64(truth.timeIntervalSince1970)
        let times = [RoughtimeTime(midpoint: t - 5, radius: 3), RoughtimeTime(midpoint: t, radius: 5), RoughtimeTime(midpoint: t + 5, radius: 3)]
        let (a, b, c) = ("roughtime://127.0.0.1:2002", "roughtime://127.0.0.2:2002", "roughtime://127.0.0.3:2002")
        func clock(_ root: String, answering: Int = 3) -> DeviceClock {
            DeviceClock(
                layout: RootLayout(root: root), clocks: { clocks.read() }, programDate: Self.floor, servers: servers, quorum: 2,
                query: { servers, quorum, _ in
                    let now = ContinuousClock.now
                    let answers = zip(servers, times).prefix(answering).map {
                        RoughtimeAnswer(server: $0, time: $1, roundTrip: .zero, receivedAt: now)
                    }
                    let failures = servers.dropFirst(answering).map { "\($0): no valid answer within 3 seconds" }
                    return try RoughtimeQuorum.decide(answers: answers, failures: failures, quorum: quorum, at: now, reading: clocks.read())
                })
        }
        let two = try TemporaryDirectory("clock-pairs-2")
        let decided = clock(two.path)
        #expect(await decided.authenticate() == nil)
        let status = decided.status()
        #expect(
            status.decisionLines == [
                "time quorum:     2 of 3 must agree, asked 2027-02-14T08:00:00Z",
                "time answered:   \(a), \(b), \(c)",
                "time agreed:     \(a), \(b), \(c) (\(a) and \(b) share 2027-02-14T07:59:55Z to 2027-02-14T07:59:58Z; "
                    + "\(b) and \(c) share 2027-02-14T08:00:02Z to 2027-02-14T08:00:05Z; \(a) and \(c) do not overlap; the interval spans them)",
                "time interval:   2027-02-14T07:59:55Z to 2027-02-14T08:00:05Z",
            ], "\(status.decisionLines)")
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        let json = try #require(try JSONSerialization.jsonObject(with: encoder.encode(status)) as? [String: Any])
        let decision = try #require(json["lastDecision"] as? [String: Any], "\(json)")
        #expect(decision["quorum"] as? Int == 2 && decision["asked"] as? Int == 3)
        #expect(decision["agreed"] as? [String] == [a, b, c] && decision["undecided"] == nil)
        #expect(decision["earliest"] as? String == "2027-02-14T07:59:55Z" && decision["latest"] as? String == "2027-02-14T08:00:05Z")
        #expect((decision["overlaps"] as? [[String: Any]])?.map { $0["servers"] as? [String] ?? [] } == [[a, b], [b, c]])
        #expect((decision["answered"] as? [[String: Any]])?.count == 3 && json["lastDecisionTried"] as? String == "2027-02-14T08:00:00Z")

        // A quorum of 3: nothing decided; which overlapped and why that is not enough.
        let three = try TemporaryDirectory("clock-pairs-3")
        let undecided = DeviceClock(
            layout: RootLayout(root: three.path), clocks: { clocks.read() }, programDate: Self.floor, servers: servers, quorum: 3,
            query: decided.query)
        let failure = await undecided.authenticate()
        #expect(failure?.hasPrefix("authenticated time: only 2 verified answers overlap, the quorum is 3 of 3") == true, "\(failure ?? "nil")")
        let none = undecided.status()
        #expect(none.authenticated == nil)
        #expect(
            none.decisionLines == [
                "time quorum:     3 of 3 must agree, asked 2027-02-14T08:00:00Z",
                "time answered:   \(a), \(b), \(c)",
                "time overlapped: \(a) and \(b) share 2027-02-14T07:59:55Z to 2027-02-14T07:59:58Z; "
                    + "\(b) and \(c) share 2027-02-14T08:00:02Z to 2027-02-14T08:00:05Z",
                "time undecided:  no interval: at most 2 verified answers overlap; the quorum is 3 of 3",
            ], "\(none.decisionLines)")
        let noneJSON = try #require(try JSONSerialization.jsonObject(with: encoder.encode(none)) as? [String: Any])
        let noneDecision = try #require(noneJSON["lastDecision"] as? [String: Any], "\(noneJSON)")
        #expect(noneDecision["undecided"] as? String == "at most 2 verified answers overlap; the quorum is 3 of 3")
        #expect(noneDecision["earliest"] == nil && (noneDecision["agreed"] as? [String])?.isEmpty == true)

        // A server that does not answer is named with its reason.
        let dead = try TemporaryDirectory("clock-pairs-dead")
        let twoAnswer = clock(dead.path, answering: 2)
        #expect(await twoAnswer.authenticate() == nil)
        #expect(
            twoAnswer.status().decisionLines.contains("time failed:     \(c) (no valid answer within 3 seconds)"),
            "\(twoAnswer.status().decisionLines)")
    }

    /// A wrong clock is reported once per episode, and again when it changes.
    @Test func aWrongClockIsReportedOncePerEpisode() throws {
        let tmp = try TemporaryDirectory("clock-report")
        let clocks = Clocks(wall: Date(timeIntervalSince1970: 0))
        let clock = DeviceClock(layout: RootLayout(root: tmp.path), clocks: { clocks.read() }, programDate: Self.floor)
        #expect(clock.markReported(.behindFloor))
        #expect(!clock.markReported(.behindFloor))
        #expect(clock.markReported(.trusted))
        #expect(clock.markReported(.behindFloor))
    }

    /// The program's date is the first floor of every device: never in the future, and
    /// moved forward with the source (a release more than ``ProgramDate/maximumLag`` after
    /// it fails here, so the constant is bumped).
    @Test func theProgramsDateFollowsTheSource() async throws {
        #expect(ProgramDate.released <= Date())
        let git = try await Subprocess.run(
            "git", ["-C", ClientctlBinary.packageRoot, "log", "-1", "--format=%ct"], gate: nil, timeout: .seconds(60))
        let newest = try #require(TimeInterval(git.output.trimmingCharacters(in: .whitespacesAndNewlines)), "git log: \(git.errorOutput)")
        let lag = Date(timeIntervalSince1970: newest).timeIntervalSince(ProgramDate.released)
        #expect(lag < ProgramDate.maximumLag, "ProgramDate.released lags the newest commit by \(Int(lag / 86_400)) days: move it forward")
    }
}

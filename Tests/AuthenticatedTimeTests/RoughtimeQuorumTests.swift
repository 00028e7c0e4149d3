import Foundation
import Testing

@testable import AuthenticatedTime

/// The quorum as a pure function: answers made by hand, the clocks injected.
@Suite struct RoughtimeQuorumTests {
    let now = ContinuousClock.now
    let reading = ClockReading(wall: Date(timeIntervalSince1970: 1_000), uptime: .seconds(500), bootID: "boot-a")

    func server(_ n: Int) throws -> RoughtimeServer {
        try RoughtimeServer(host: "127.0.0.\(n)", port: 2002, publicKey: [UInt8](repeating: 1, count: 32))
    }

    func answer(_ n: Int, _ midpoint: UInt64, radius: UInt32 = 3, roundTrip: Duration = .zero, age: Duration = .zero) throws -> RoughtimeAnswer {
        RoughtimeAnswer(
            server: try server(n), time: RoughtimeTime(midpoint: midpoint, radius: radius), roundTrip: roundTrip, receivedAt: now - age)
    }

    @Test func threeHonestServersAgreeOnTheirIntersection() throws {
        let answers = [try answer(1, 1_800_000_000), try answer(2, 1_800_000_001), try answer(3, 1_799_999_999)]
        let time = try RoughtimeQuorum.decide(answers: answers, quorum: 3, at: now, reading: reading)
        #expect(time.earliest == Date(timeIntervalSince1970: 1_799_999_998))
        #expect(time.latest == Date(timeIntervalSince1970: 1_800_000_002))
        #expect(time.agreeing == ["roughtime://127.0.0.1:2002", "roughtime://127.0.0.2:2002", "roughtime://127.0.0.3:2002"])
        #expect(time.outvoted.isEmpty && time.failed.isEmpty)
        #expect(time.obtainedAt == reading)
    }

    @Test func aLyingServerIsNamedAndOutvoted() throws {
        let answers = [try answer(1, 1_800_000_000), try answer(2, 1_957_680_000, radius: 1), try answer(3, 1_800_000_001)]
        let time = try RoughtimeQuorum.decide(answers: answers, quorum: 2, at: now, reading: reading)
        #expect(time.agreeing == ["roughtime://127.0.0.1:2002", "roughtime://127.0.0.3:2002"])
        #expect(time.outvoted == ["time server roughtime://127.0.0.2:2002 says 2032-01-14T08:00:00Z, ± 1 s: outvoted by 2 of 3"])
        #expect(time.earliest == Date(timeIntervalSince1970: 1_799_999_998) && time.latest == Date(timeIntervalSince1970: 1_800_000_003))
    }

    /// The round trip widens an answer's radius, and an answer received earlier is carried
    /// forward to the decision's instant on the monotonic clock.
    @Test func roundTripAndAgeMoveTheInterval() throws {
        let one = try answer(1, 1_800_000_000, radius: 1, roundTrip: .milliseconds(500), age: .seconds(2))
        let time = try RoughtimeQuorum.decide(answers: [one], quorum: 1, at: now, reading: reading)
        #expect(time.earliest == Date(timeIntervalSince1970: 1_800_000_000.5))
        #expect(time.latest == Date(timeIntervalSince1970: 1_800_000_003.5))
        // Without the round trip the two would not overlap; with it they do.
        let far = try answer(2, 1_800_000_010, radius: 1, roundTrip: .seconds(4))
        let close = try answer(3, 1_800_000_000, radius: 1, roundTrip: .seconds(4))
        let both = try RoughtimeQuorum.decide(answers: [far, close], quorum: 2, at: now, reading: reading)
        #expect(both.earliest == Date(timeIntervalSince1970: 1_800_000_005) && both.latest == Date(timeIntervalSince1970: 1_800_000_005))
        #expect(throws: AuthenticatedTimeError.self) {
            try RoughtimeQuorum.decide(
                answers: [try answer(2, 1_800_000_010, radius: 1), try answer(3, 1_800_000_000, radius: 1)], quorum: 2, at: now, reading: reading)
        }
    }

    @Test func tooFewAgreeingAnswersFailNamingEveryServer() throws {
        let answers = [try answer(1, 1_800_000_000), try answer(2, 1_900_000_000)]
        let failures = ["roughtime://127.0.0.3:2002: no valid answer within 2 seconds"]
        let error = #expect(throws: AuthenticatedTimeError.self) {
            try RoughtimeQuorum.decide(answers: answers, failures: failures, quorum: 2, at: now, reading: reading)
        }
        #expect(error?.code == .noQuorum)
        #expect(
            error?.message == "authenticated time: no 2 verified answers overlap, the quorum is 2 of 3: "
                + "roughtime://127.0.0.1:2002 says 2027-01-15T08:00:00Z, ± 3 s; roughtime://127.0.0.2:2002 says 2030-03-17T17:46:40Z, ± 3 s; "
                + "roughtime://127.0.0.3:2002: no valid answer within 2 seconds")
        let none = #expect(throws: AuthenticatedTimeError.self) {
            try RoughtimeQuorum.decide(answers: [], failures: failures, quorum: 1, at: now, reading: reading)
        }
        #expect(none?.message.hasSuffix("the quorum is 1 of 1: roughtime://127.0.0.3:2002: no valid answer within 2 seconds") == true)
    }

    @Test func twoEqualGroupsThatDisagreeAreNoQuorum() throws {
        let answers = [try answer(1, 1_800_000_000), try answer(2, 1_800_000_001), try answer(3, 1_900_000_000), try answer(4, 1_900_000_001)]
        let error = #expect(throws: AuthenticatedTimeError.self) {
            try RoughtimeQuorum.decide(answers: answers, quorum: 2, at: now, reading: reading)
        }
        #expect(
            error?.message.hasPrefix(
                "authenticated time: two groups of 2 that share no server disagree (roughtime://127.0.0.1:2002, roughtime://127.0.0.2:2002 against")
                == true)
        // A third member settles it.
        let settled = try RoughtimeQuorum.decide(answers: answers + [try answer(5, 1_900_000_002)], quorum: 2, at: now, reading: reading)
        #expect(settled.agreeing.count == 3 && settled.outvoted.count == 2)
    }

    /// Issue 65: two honest servers (radius 1 s and 30 s) and one with valid signatures 20 s
    /// behind (radius 5 s). The wide honest answer overlaps both others, so the sets {1 s,
    /// 30 s} and {30 s, behind} both have the most members; they share a server and are no
    /// rivals. The interval spans both shared parts, and a wall clock in 2099 is corrected
    /// into it, as it is with a dead server in the third place.
    @Test func aServerSlightlyBehindBesideAWideHonestOneIsNoRival() throws {
        let truth: UInt64 = 1_800_000_000
        let answers = [try answer(1, truth, radius: 1), try answer(2, truth, radius: 30), try answer(3, truth - 20, radius: 5)]
        let time = try RoughtimeQuorum.decide(answers: answers, quorum: 2, at: now, reading: reading)
        #expect(time.earliest == Date(timeIntervalSince1970: Double(truth - 25)))
        #expect(time.latest == Date(timeIntervalSince1970: Double(truth + 1)))
        #expect(time.agreeing == ["roughtime://127.0.0.1:2002", "roughtime://127.0.0.2:2002", "roughtime://127.0.0.3:2002"])
        #expect(time.outvoted.isEmpty)
        let in2099 = ClockReading(wall: Date(timeIntervalSince1970: 4_085_000_000), uptime: reading.uptime, bootID: reading.bootID)
        #expect(time.correctedTime(at: in2099) == Date(timeIntervalSince1970: Double(truth + 1)))
        // The same with the third server dead: the two honest ones decide alone.
        let dead = try RoughtimeQuorum.decide(
            answers: Array(answers.prefix(2)), failures: ["roughtime://127.0.0.3:2002: no valid answer within 3 seconds"], quorum: 2, at: now,
            reading: reading)
        #expect(dead.earliest == Date(timeIntervalSince1970: Double(truth - 1)) && dead.latest == Date(timeIntervalSince1970: Double(truth + 1)))
        #expect(dead.correctedTime(at: in2099) == time.correctedTime(at: in2099))
        // A server far off beside them is still named and outvoted.
        let liar = try RoughtimeQuorum.decide(answers: answers + [try answer(4, truth + 600, radius: 1)], quorum: 2, at: now, reading: reading)
        #expect(liar.outvoted == ["time server roughtime://127.0.0.4:2002 says 2027-01-15T08:10:00Z, ± 1 s: outvoted by 2 of 4"])
        #expect(liar.earliest == time.earliest && liar.latest == time.latest)
    }

    /// Issue 75: three answers where two pairs overlap and the outer two do not (A∩B and B∩C
    /// share a stretch each, A∩C is empty). With 2 of 3 the quorum tolerates one wrong
    /// server: A and C cannot both be right, so B is, and the true time is in A∩B or in
    /// B∩C. The sound interval is the smallest that holds both: from the start of A∩B to the
    /// end of B∩C, inside B, each end vouched for by two servers. Either part alone could
    /// leave the true time out. The tally names both sets, what each shares, and all three
    /// as agreeing; a server that failed is named with its reason.
    @Test func twoOverlappingPairsAtQuorumTwoSpanBothSharedParts() throws {
        let t: UInt64 = 1_800_000_000
        let answers = [try answer(1, t - 5), try answer(2, t, radius: 5), try answer(3, t + 5)]
        let failures = ["roughtime://127.0.0.4:2002: no valid answer within 3 seconds"]
        let time = try RoughtimeQuorum.decide(answers: answers, failures: failures, quorum: 2, at: now, reading: reading)
        let at = { (s: UInt64) in Date(timeIntervalSince1970: Double(s)) }
        #expect(time.earliest == at(t - 5) && time.latest == at(t + 5))
        // Sound: whichever one server is wrong, the part the other two share is inside it.
        let (a, b, c) = ((t - 8)...(t - 2), (t - 5)...(t + 5), (t + 2)...(t + 8))
        #expect(!a.overlaps(c), "the outer two do not overlap: a wrong one among them")
        for shared in [a.clamped(to: b), b.clamped(to: c)] {
            #expect(time.earliest <= at(shared.lowerBound) && at(shared.upperBound) <= time.latest, "\(shared)")
        }
        #expect(at(b.lowerBound) <= time.earliest && time.latest <= at(b.upperBound), "never wider than the server all sets share")
        #expect(time.agreeing == ["roughtime://127.0.0.1:2002", "roughtime://127.0.0.2:2002", "roughtime://127.0.0.3:2002"])
        #expect(time.outvoted.isEmpty && time.failed == failures)
        let tally = try #require(time.tally)
        #expect(tally.quorum == 2 && tally.asked == 4 && tally.undecided == nil)
        #expect(tally.answered.map(\.server) == time.agreeing)
        #expect(tally.answered.map(\.earliest) == [at(t - 8), at(t - 5), at(t + 2)])
        #expect(
            tally.overlaps == [
                .init(servers: ["roughtime://127.0.0.1:2002", "roughtime://127.0.0.2:2002"], earliest: at(t - 5), latest: at(t - 2)),
                .init(servers: ["roughtime://127.0.0.2:2002", "roughtime://127.0.0.3:2002"], earliest: at(t + 2), latest: at(t + 5)),
            ])
        #expect(tally.agreed == time.agreeing && tally.earliest == time.earliest && tally.latest == time.latest)
        #expect(tally.failed == [.init(server: "roughtime://127.0.0.4:2002", reason: "no valid answer within 3 seconds")])
        let decoded = try JSONDecoder().decode(AuthenticatedTime.self, from: JSONEncoder().encode(time))
        #expect(decoded == time && decoded.tally == tally)
    }

    /// The same answers with a quorum of 3: at most two share a point, so no interval is
    /// decided; the error carries the tally: who answered, which overlapped, and why that
    /// was not enough.
    @Test func twoOverlappingPairsAtQuorumThreeDecideNothing() throws {
        let t: UInt64 = 1_800_000_000
        let answers = [try answer(1, t - 5), try answer(2, t, radius: 5), try answer(3, t + 5)]
        let error = #expect(throws: AuthenticatedTimeError.self) {
            try RoughtimeQuorum.decide(answers: answers, quorum: 3, at: now, reading: reading)
        }
        #expect(error?.code == .noQuorum)
        #expect(error?.message.hasPrefix("authenticated time: only 2 verified answers overlap, the quorum is 3 of 3: ") == true)
        let tally = try #require(error?.underlying as? RoughtimeTally)
        #expect(tally.quorum == 3 && tally.asked == 3 && tally.answered.count == 3)
        #expect(
            tally.overlaps.map(\.servers) == [
                ["roughtime://127.0.0.1:2002", "roughtime://127.0.0.2:2002"], ["roughtime://127.0.0.2:2002", "roughtime://127.0.0.3:2002"],
            ])
        #expect(tally.agreed.isEmpty && tally.outvoted.isEmpty && tally.earliest == nil && tally.latest == nil)
        #expect(tally.undecided == "at most 2 verified answers overlap; the quorum is 3 of 3")
        // A lone answer overlaps nothing.
        let lone = #expect(throws: AuthenticatedTimeError.self) {
            try RoughtimeQuorum.decide(answers: [try answer(1, t), try answer(2, t + 100)], quorum: 2, at: now, reading: reading)
        }
        let none = try #require(lone?.underlying as? RoughtimeTally)
        #expect(none.overlaps.isEmpty && none.undecided == "no two verified answers overlap; the quorum is 2 of 2")
    }

    @Test func quorumBelowOneIsRefused() {
        #expect(throws: AuthenticatedTimeError.self) { try RoughtimeQuorum.decide(answers: [], quorum: 0, at: now, reading: reading) }
    }

    /// The persisted value corrects a wall clock outside the interval, carried forward on the
    /// monotonic clock, and leaves it alone in another boot.
    @Test func persistedTimeCorrectsTheWallClockWithinItsBoot() throws {
        let time = AuthenticatedTime(
            earliest: Date(timeIntervalSince1970: 1_800_000_000), latest: Date(timeIntervalSince1970: 1_800_000_006), obtainedAt: reading,
            agreeing: ["roughtime://127.0.0.1:2002"])
        #expect(time.midpoint == Date(timeIntervalSince1970: 1_800_000_003))
        let later = ClockReading(wall: Date(timeIntervalSince1970: 1_000_060), uptime: .seconds(560), bootID: "boot-a")
        #expect(time.interval(at: later) == Date(timeIntervalSince1970: 1_800_000_060)...Date(timeIntervalSince1970: 1_800_000_066))
        #expect(time.correctedTime(at: later) == Date(timeIntervalSince1970: 1_800_000_060))
        var ahead = later
        ahead.wall = Date(timeIntervalSince1970: 2_000_000_000)
        #expect(time.correctedTime(at: ahead) == Date(timeIntervalSince1970: 1_800_000_066))
        var inside = later
        inside.wall = Date(timeIntervalSince1970: 1_800_000_062)
        #expect(time.correctedTime(at: inside) == inside.wall)
        var otherBoot = later
        otherBoot.bootID = "boot-b"
        #expect(time.interval(at: otherBoot) == nil && time.correctedTime(at: otherBoot) == otherBoot.wall)
        let decoded = try JSONDecoder().decode(AuthenticatedTime.self, from: JSONEncoder().encode(time))
        #expect(decoded == time)
    }

    @Test func clockReadingIsOfThisBoot() {
        let first = ClockReading.now()
        let second = ClockReading.now()
        #expect(first.bootID.count == 36 && first.bootID == second.bootID)
        #expect(second.uptime >= first.uptime && first.uptime > .zero)
    }
}

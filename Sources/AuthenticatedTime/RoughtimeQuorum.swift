import Foundation

/// Decides the interval enough Roughtime servers agree on, from their verified answers: a
/// pure function of the answers and the clocks. Asking the servers over UDP is the device's
/// (`RoughtimeQuorum.query(_:quorum:timeout:)` in AuthenticatedTimeClient).
public enum RoughtimeQuorum {
    /// Decides the authenticated interval from verified `answers`, a pure function: the
    /// clocks come in as `instant` (`ContinuousClock`) and `reading` (taken at that instant).
    ///
    /// Each answer stands for `[midpoint − radius − round trip, midpoint + radius + round trip]`
    /// (the server stamped its time somewhere in the round trip), carried forward from when it
    /// arrived to `instant`. The decision is by the intervals themselves, as Marzullo's
    /// algorithm does: the most answers whose intervals share a point (touching intervals
    /// agree) decide when they are at least `quorum`. Where several such sets exist and share
    /// an answer (an honest server with a wide radius overlaps an honest one with a narrow
    /// radius on one side and a server a few seconds off on the other), the true time may be
    /// in any of their common parts: the interval spans them all, from the earliest to the
    /// latest point that many answers share. Every answer in none of those sets is named and
    /// outvoted.
    /// - Parameter failures: one line per server without a verified answer, for the messages.
    /// The result carries the decision in full (``AuthenticatedTime/tally``: who answered,
    /// each largest set and the part it shares, who was outvoted or failed and why).
    /// - Throws: ``AuthenticatedTimeErrorCode/noQuorum`` when fewer than `quorum` answers
    ///   share a point, or when two such sets share no answer (disjoint groups, possible only
    ///   with a quorum below a majority); its `underlying` is the ``RoughtimeTally`` (who
    ///   answered, which overlapped, why that was not enough).
    public static func decide(
        answers: [RoughtimeAnswer], failures: [String] = [], quorum: Int, at instant: ContinuousClock.Instant, reading: ClockReading
    ) throws -> AuthenticatedTime {
        guard quorum >= 1 else { throw AuthenticatedTimeError(.noQuorum, "authenticated time: the quorum must be at least 1, not \(quorum)") }
        let intervals = answers.map { answer -> (low: Double, high: Double) in
            let age = seconds(instant - answer.receivedAt)
            let middle = Double(answer.time.midpoint) + age
            let spread = Double(answer.time.radius) + seconds(answer.roundTrip)
            return (middle - spread, middle + spread)
        }
        let groups = largestOverlaps(intervals)
        let size = groups.first?.members.count ?? 0
        let described = answers.map { describe($0) }
        let total = answers.count + failures.count
        let name = { (i: Int) in "\(answers[i].server)" }
        var tally = RoughtimeTally(
            quorum: quorum, asked: total,
            answered: answers.indices.map {
                .init(
                    server: name($0), earliest: Date(timeIntervalSince1970: intervals[$0].low),
                    latest: Date(timeIntervalSince1970: intervals[$0].high))
            },
            // One answer alone overlaps nothing: sets of one are named only when they decide.
            overlaps: size >= 2 || size >= quorum
                ? groups.map {
                    .init(
                        servers: $0.members.sorted().map(name), earliest: Date(timeIntervalSince1970: $0.low),
                        latest: Date(timeIntervalSince1970: $0.high))
                } : [],
            agreed: [], outvoted: [], failed: failures.map(RoughtimeTally.refusal))
        guard size >= quorum, size > 0 else {
            let agreeing = size <= 1 ? "no \(quorum) verified answers overlap" : "only \(size) verified answers overlap"
            tally.undecided =
                switch size {
                case 0: "no server gave a verified answer; the quorum is \(quorum) of \(total)"
                case 1: "no two verified answers overlap; the quorum is \(quorum) of \(total)"
                default: "at most \(size) verified answers overlap; the quorum is \(quorum) of \(total)"
                }
            let all = (described + failures).joined(separator: "; ")
            throw AuthenticatedTimeError(
                .noQuorum, "authenticated time: \(agreeing), the quorum is \(quorum) of \(total): \(all)", underlying: tally)
        }
        for (i, a) in groups.enumerated() {
            for b in groups[(i + 1)...] where a.members.isDisjoint(with: b.members) {
                let names = [a, b].map { group in group.members.sorted().map(name).joined(separator: ", ") }
                tally.undecided = "two groups of \(size) that share no server disagree (\(names[0]) against \(names[1]))"
                throw AuthenticatedTimeError(
                    .noQuorum,
                    "authenticated time: two groups of \(size) that share no server disagree (\(names[0]) against \(names[1])): "
                        + described.joined(separator: "; "), underlying: tally)
            }
        }
        // The sets share answers (checked above). With a quorum of at most that many wrong
        // servers tolerated, the true time is in one of their shared parts; which one the
        // intervals cannot tell (A∩B and B∩C with A∩C empty: A or C is wrong, B is not), so
        // the interval is the smallest that holds them all. A part of it between the shared
        // parts is vouched for by fewer than the quorum, but the true time cannot be there
        // unless more servers are wrong than the quorum allows.
        let members = groups.reduce(into: Set<Int>()) { $0.formUnion($1.members) }
        let low = groups.map(\.low).min() ?? 0
        let high = groups.map(\.high).max() ?? 0
        let outvoted = answers.indices.filter { !members.contains($0) }
        tally.agreed = members.sorted().map(name)
        tally.outvoted = outvoted.map { .init(server: name($0), reason: "\(says(answers[$0])): outvoted by \(size) of \(total)") }
        tally.earliest = Date(timeIntervalSince1970: low)
        tally.latest = Date(timeIntervalSince1970: high)
        var time = AuthenticatedTime(
            earliest: Date(timeIntervalSince1970: low), latest: Date(timeIntervalSince1970: high), obtainedAt: reading,
            agreeing: tally.agreed, outvoted: outvoted.map { "time server \(described[$0]): outvoted by \(size) of \(total)" },
            failed: failures)
        time.tally = tally
        return time
    }

    /// Every largest set of intervals that share a point, with the part they share: a sweep
    /// over the ends in order (a start before an end at the same point, so touching intervals
    /// agree), one set per stretch where the most intervals overlap.
    static func largestOverlaps(_ intervals: [(low: Double, high: Double)]) -> [(members: Set<Int>, low: Double, high: Double)] {
        let events = intervals.enumerated().flatMap { (i, interval) -> [(Double, Int, Int)] in [(interval.low, 0, i), (interval.high, 1, i)] }
            .sorted { ($0.0, $0.1) < ($1.0, $1.1) }
        var active = Set<Int>()
        var most = 0
        for (_, kind, i) in events {
            if kind == 0 {
                active.insert(i)
                most = max(most, active.count)
            } else {
                active.remove(i)
            }
        }
        guard most > 0 else { return [] }
        var groups: [(members: Set<Int>, low: Double, high: Double)] = []
        active = []
        for (point, kind, i) in events {
            if kind == 0 {
                active.insert(i)
                if active.count == most { groups.append((active, point, point)) }
            } else {
                // The stretch of the most overlapping intervals ends where the first of them
                // ends (no start comes between: it would make more than the most).
                if active.count == most, let last = groups.indices.last { groups[last].high = point }
                active.remove(i)
            }
        }
        return groups
    }

    /// `roughtime://H:P says 2031-05-01T12:00:00Z, ± 3 s`.
    static func describe(_ answer: RoughtimeAnswer) -> String { "\(answer.server) \(says(answer))" }

    /// `says 2031-05-01T12:00:00Z, ± 3 s`.
    static func says(_ answer: RoughtimeAnswer) -> String {
        let date = Date(timeIntervalSince1970: Double(answer.time.midpoint))
        return "says \(date.formatted(.iso8601)), ± \(answer.time.radius) s"
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

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
    /// arrived to `instant`. The largest group of answers that overlap at one point (Marzullo's
    /// sweep) wins when it has at least `quorum` members; the interval is their intersection.
    /// Every other answer is named and outvoted.
    /// - Parameter failures: one line per server without a verified answer, for the messages.
    /// - Throws: ``AuthenticatedTimeErrorCode/noQuorum`` when fewer than `quorum` answers
    ///   overlap, or when two different groups of the same size both reach it.
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
        // Starts sort before ends at the same second: touching intervals agree.
        let events = intervals.enumerated().flatMap { (i, interval) -> [(Double, Int, Int)] in [(interval.low, 0, i), (interval.high, 1, i)] }
            .sorted { ($0.0, $0.1) < ($1.0, $1.1) }
        var active = Set<Int>()
        var best = Set<Int>()
        var rival: Set<Int>?
        for (_, kind, i) in events {
            if kind == 1 {
                active.remove(i)
                continue
            }
            active.insert(i)
            if active.count > best.count {
                best = active
                rival = nil
            } else if active.count == best.count, active != best {
                rival = active
            }
        }
        let described = answers.map { describe($0) }
        guard best.count >= quorum else {
            let agreeing = best.count <= 1 ? "no \(quorum) verified answers overlap" : "only \(best.count) verified answers overlap"
            let all = (described + failures).joined(separator: "; ")
            throw AuthenticatedTimeError(
                .noQuorum, "authenticated time: \(agreeing), the quorum is \(quorum) of \(answers.count + failures.count): \(all)")
        }
        if let rival {
            let groups = [best, rival].map { group in group.sorted().map { "\(answers[$0].server)" }.joined(separator: ", ") }
            throw AuthenticatedTimeError(
                .noQuorum,
                "authenticated time: two groups of \(best.count) disagree (\(groups[0]) against \(groups[1])): \(described.joined(separator: "; "))")
        }
        let low = best.map { intervals[$0].low }.max() ?? 0
        let high = best.map { intervals[$0].high }.min() ?? 0
        let outvoted = answers.indices.filter { !best.contains($0) }.map {
            "time server \(described[$0]): outvoted by \(best.count) of \(answers.count + failures.count)"
        }
        return AuthenticatedTime(
            earliest: Date(timeIntervalSince1970: low), latest: Date(timeIntervalSince1970: high), obtainedAt: reading,
            agreeing: best.sorted().map { "\(answers[$0].server)" }, outvoted: outvoted, failed: failures)
    }

    /// `roughtime://H:P says 2031-05-01T12:00:00Z, ± 3 s`.
    static func describe(_ answer: RoughtimeAnswer) -> String {
        let date = Date(timeIntervalSince1970: Double(answer.time.midpoint))
        return "\(answer.server) says \(date.formatted(.iso8601)), ± \(answer.time.radius) s"
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

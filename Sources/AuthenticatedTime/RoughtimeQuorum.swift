import Foundation

/// Asks several Roughtime servers and decides the interval enough of them agree on.
public enum RoughtimeQuorum {
    /// Queries every server at once (each bounded by `timeout`) and decides with
    /// ``decide(answers:failures:quorum:at:reading:)`` on the clocks read once all are in.
    /// - Throws: ``AuthenticatedTimeErrorCode/noQuorum`` naming each server and why, when
    ///   fewer than `quorum` verified answers overlap.
    public static func query(_ servers: [RoughtimeServer], quorum: Int, timeout: Duration) async throws -> AuthenticatedTime {
        let results = await withTaskGroup(of: (Int, Result<RoughtimeAnswer, any Error>).self) { group in
            for (i, server) in servers.enumerated() {
                group.addTask {
                    do { return (i, .success(try await RoughtimeClient.query(server, timeout: timeout))) } catch { return (i, .failure(error)) }
                }
            }
            var results: [(Int, Result<RoughtimeAnswer, any Error>)] = []
            for await result in group { results.append(result) }
            return results.sorted { $0.0 < $1.0 }.map(\.1)
        }
        var answers: [RoughtimeAnswer] = []
        var failures: [String] = []
        for (server, result) in zip(servers, results) {
            switch result {
            case .success(let answer): answers.append(answer)
            case .failure(let error as AuthenticatedTimeError):
                failures.append(error.message.hasPrefix("\(server)") ? error.message : "\(server): \(error.message)")
            case .failure(let error): failures.append("\(server): \(error)")
            }
        }
        let instant = ContinuousClock.now
        return try decide(answers: answers, failures: failures, quorum: quorum, at: instant, reading: .now())
    }

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

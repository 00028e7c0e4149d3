import Foundation

/// What one decision of ``RoughtimeQuorum`` saw, for `status` (docs/device-time.md#status):
/// the quorum asked, which servers answered and with what interval, the largest sets whose
/// intervals share a point (each with the part they share), which servers agreed, which
/// were outvoted or failed and why, and the interval decided, or why none was.
///
/// A decided ``AuthenticatedTime`` carries it (``AuthenticatedTime/tally``); a
/// ``AuthenticatedTimeErrorCode/noQuorum`` error carries it as its `underlying` cause, so a
/// device can say which servers overlapped and why that was not enough.
package struct RoughtimeTally: Sendable, Hashable, Codable, Error {
    /// One verified answer: its server and the interval it stands for at the decision.
    package struct Answer: Sendable, Hashable, Codable {
        /// `roughtime://HOST:PORT`.
        package var server: String
        /// Its midpoint less its radius and round trip.
        package var earliest: Date
        /// Its midpoint plus its radius and round trip.
        package var latest: Date
    }

    /// A largest set of answers whose intervals share a point, and the part they share.
    package struct Overlap: Sendable, Hashable, Codable {
        /// Its servers, in the order they were asked.
        package var servers: [String]
        /// The start of the part they share.
        package var earliest: Date
        /// The end of the part they share.
        package var latest: Date
    }

    /// A server that did not count, and why in one short phrase.
    package struct Refusal: Sendable, Hashable, Codable {
        /// `roughtime://HOST:PORT` (empty when the failure did not name one).
        package var server: String
        /// `says 2032-01-14T08:00:00Z, ± 1 s: outvoted by 2 of 3`, `no valid answer within 3 seconds`.
        package var reason: String
    }

    /// How many had to agree.
    package var quorum: Int
    /// How many servers were asked (answers and failures).
    package var asked: Int
    /// The verified answers, in the order they were asked.
    package var answered: [Answer]
    /// Every largest set of answers that share a point (none when no two answers do and the
    /// quorum is above one). More than one: one answer overlaps two that do not overlap
    /// each other, or two groups disagree.
    package var overlaps: [Overlap]
    /// The servers whose answers count: every member of ``overlaps`` when an interval was
    /// decided, else none.
    package var agreed: [String]
    /// The answers in none of ``overlaps``, when an interval was decided.
    package var outvoted: [Refusal]
    /// The servers without a verified answer.
    package var failed: [Refusal]
    /// The start of the interval decided (nil: none was).
    package var earliest: Date?
    /// The end of the interval decided (nil: none was).
    package var latest: Date?
    /// Why no interval was decided or used (nil: one was).
    package var undecided: String?

    /// A failure line of a query (`roughtime://H:P: no valid answer within 3 seconds`) as
    /// its server and its reason; a line that names no server is all reason.
    static func refusal(_ line: String) -> Refusal {
        guard line.hasPrefix("roughtime://"), let colon = line.range(of: ": ") else { return Refusal(server: "", reason: line) }
        return Refusal(server: String(line[..<colon.lowerBound]), reason: String(line[colon.upperBound...]))
    }
}

import Foundation

/// What a device decides by, from what its clocks say: a pure function of the wall clock,
/// the floor and the authenticated interval (docs/device-time.md#the-rule).
///
/// | wall clock | decides by | verdict |
/// |---|---|---|
/// | inside the authenticated interval, not below the floor | the wall clock | trusted |
/// | outside the authenticated interval | its nearest end (then the floor) | behind / ahead of authenticated time |
/// | below the floor (no interval, or the floor inside it) | the floor | behind the floor |
/// | any, with the floor above the interval | the interval's rule | floor ahead of authenticated time |
///
/// Nothing goes below the program's own release date: no server answer makes it untrue, so
/// an interval that ends before it is not used, and no decision is made at a time before it.
package enum ClockJudgement {
    /// How far below the floor the wall clock may read before it is called wrong (two
    /// machines' clocks a few seconds apart are not a wrong clock); decisions use the
    /// floor whatever the gap.
    package static let tolerance: TimeInterval = 300

    /// The time to decide by, and what the wall clock is.
    /// - Parameter programDate: the release date of the program deciding, below which no
    ///   decision goes (`floor` is never below it either).
    package static func judge(
        wall: Date, floor: Date, authenticated: ClosedRange<Date>?, programDate: Date = .distantPast
    ) -> (trusted: Date, verdict: ClockVerdict) {
        guard let interval = authenticated, interval.upperBound >= programDate else {
            if wall < floor {
                return (floor, floor.timeIntervalSince(wall) > tolerance ? .behindFloor : .trusted)
            }
            return (wall, .trusted)
        }
        let clamped = min(max(wall, interval.lowerBound), interval.upperBound)
        if floor > interval.upperBound {
            // A signed time later than what a quorum of time servers vouch for: the signer's
            // clock ran ahead. The servers win, never below the program's own date; the
            // floor is kept (it only moves forward).
            return (max(clamped, programDate), .floorAheadOfAuthenticated)
        }
        let trusted = max(clamped, floor)
        if wall < interval.lowerBound { return (trusted, .behindAuthenticated) }
        if wall > interval.upperBound { return (trusted, .aheadOfAuthenticated) }
        if floor.timeIntervalSince(wall) > tolerance { return (trusted, .behindFloor) }
        return (trusted, .trusted)
    }
}

/// What the wall clock is, judged by what the device has verified.
public enum ClockVerdict: String, Codable, Sendable, Equatable {
    /// Not below the floor, and inside the authenticated interval when there is one.
    case trusted
    /// Below the newest time the device has verified (by more than a few minutes).
    case behindFloor = "behind-floor"
    /// Before the interval the time servers vouch for.
    case behindAuthenticated = "behind-authenticated"
    /// After the interval the time servers vouch for.
    case aheadOfAuthenticated = "ahead-of-authenticated"
    /// The floor is later than the time servers vouch for (a signer's clock ran ahead).
    case floorAheadOfAuthenticated = "floor-ahead-of-authenticated"

    /// True when the wall clock (or the floor) is wrong.
    public var isWrong: Bool { self != .trusted }
}

import Foundation

/// Whole-second wall-clock arithmetic in one time zone, the building block of ``MaintenanceWindow``'s schedule.
///
/// Instants are whole seconds since 1970 (UTC). The zone's offset from UTC is piecewise constant; it changes only at
/// transitions (daylight saving, or a change of standard offset), which tz data places on whole seconds. Within a
/// stretch of constant offset the local time advances exactly with real time, which is what makes the schedule
/// computable without scanning.
package struct WallClock: Sendable {
    /// Seconds in a day.
    package static let secondsPerDay = 86_400
    /// Instants further than this from 1970 (about 31 700 years) are treated as out of range.
    package static let limitSeconds: Double = 1e12

    /// The zone whose wall clock this is.
    package let timeZone: TimeZone

    /// A wall clock for `timeZone`.
    package init(timeZone: TimeZone) {
        self.timeZone = timeZone
    }

    /// The instant's seconds since 1970 when finite and within ±``limitSeconds``, else nil.
    package static func seconds(of instant: Date) -> Double? {
        let value = instant.timeIntervalSince1970
        guard value.isFinite, abs(value) <= limitSeconds else {
            return nil
        }
        return value
    }

    /// The date of a whole second since 1970.
    package static func date(_ second: Int) -> Date {
        Date(timeIntervalSince1970: TimeInterval(second))
    }

    /// The zone's offset from UTC, in seconds, at a whole second.
    package func offset(at second: Int) -> Int {
        timeZone.secondsFromGMT(for: WallClock.date(second))
    }

    /// The local second of the day (0…86399) at a whole second when the zone's offset is `offset`.
    package static func secondOfDay(at second: Int, offset: Int) -> Int {
        let local = (second + offset) % secondsPerDay
        return local < 0 ? local + secondsPerDay : local
    }

    /// The first whole second in (`second`, `limit`] at which the offset may differ from `offset`, or nil when it
    /// is `offset` throughout.
    ///
    /// Uses the zone's next reported transition; as a safety net for a change the platform does not report, it
    /// also compares the offset at `limit` and, if it differs, bisects for the first differing second. The returned
    /// second is always greater than `second`, so callers that restart from it make progress.
    package func nextOffsetChange(after second: Int, through limit: Int, offset: Int) -> Int? {
        if let transition = timeZone.nextDaylightSavingTimeTransition(after: WallClock.date(second)),
            let value = WallClock.seconds(of: transition)
        {
            let transitionSecond = Int(value.rounded(.up))
            if transitionSecond > second, transitionSecond <= limit {
                return transitionSecond
            }
        }
        guard self.offset(at: limit) != offset else {
            return nil
        }
        var same = second
        var different = limit
        while different - same > 1 {
            let middle = same + (different - same) / 2
            if self.offset(at: middle) == offset {
                same = middle
            } else {
                different = middle
            }
        }
        return different
    }
}

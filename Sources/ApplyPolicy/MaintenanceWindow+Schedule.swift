import Foundation

extension MaintenanceWindow {
    /// How far ahead ``nextOpening(after:)`` and ``closing(after:)`` look: 8 days.
    package static let searchHorizon: TimeInterval = 8 * 86_400

    /// True for `00:00-24:00`: inside at every instant, never closes.
    package var isWholeDay: Bool { startMinute == 0 && endMinute == 1_440 }

    /// Whether the instant is inside: its local wall-clock time in the window's zone, at second resolution, is in
    /// [start, end) (crossing midnight: ≥ start or < end). See the type's documentation for DST consequences.
    /// Instants that are not finite or beyond ±31 000 years are never inside.
    package func contains(_ instant: Date) -> Bool {
        guard let value = WallClock.seconds(of: instant) else {
            return false
        }
        let second = Int(value.rounded(.down))
        let clock = WallClock(timeZone: timeZone)
        return isInside(secondOfDay: WallClock.secondOfDay(at: second, offset: clock.offset(at: second)))
    }

    /// The earliest instant at or after `instant` that is inside: `instant` itself when it is inside, else the
    /// whole second at which the window next opens — at its start time, or at a zone transition that moves the
    /// wall clock into the window (e.g. the repeated hour after falling back). Nil when it does not open before
    /// `instant` + ``searchHorizon`` (8 days; a valid window always opens within 2 days) or `instant` is out of range.
    package func nextOpening(after instant: Date) -> Date? {
        guard let value = WallClock.seconds(of: instant) else {
            return nil
        }
        if contains(instant) {
            return instant
        }
        // Openings fall on whole seconds, so the next one after a fractional instant is at or after its ceiling.
        let limit = Int((value + MaintenanceWindow.searchHorizon).rounded(.up))
        return firstSecond(from: Int(value.rounded(.up)), before: limit, inside: true).map(WallClock.date)
    }

    /// When the window, open at `instant`, next closes: the earliest whole second after `instant` that is not inside
    /// — at the end time, or at a zone transition that moves the wall clock out of the window (e.g. springing
    /// forward over its end). Nil when the window is not open at `instant`, stays open for the whole
    /// ``searchHorizon`` (`00:00-24:00`), or `instant` is out of range.
    package func closing(after instant: Date) -> Date? {
        guard let value = WallClock.seconds(of: instant), contains(instant), !isWholeDay else {
            return nil
        }
        // The whole second containing `instant` is inside too; the first outside second after it is > instant.
        let limit = Int((value + MaintenanceWindow.searchHorizon).rounded(.up))
        return firstSecond(from: Int(value.rounded(.down)), before: limit, inside: false).map(WallClock.date)
    }

    /// Whether a local second of the day is inside [start, end) (crossing midnight: ≥ start or < end).
    private func isInside(secondOfDay: Int) -> Bool {
        let start = startMinute * 60
        let end = endMinute * 60
        if start < end {
            return secondOfDay >= start && secondOfDay < end
        }
        return secondOfDay >= start || secondOfDay < end
    }

    /// The first whole second in [`from`, `limit`) whose inside-ness is `inside`, or nil.
    ///
    /// Walks stretches of constant zone offset. Within one, local time advances with real time, so inside-ness can
    /// only change at the next local start (to inside) or end (to outside) time: the candidate is that many seconds
    /// ahead. If the offset may change before the candidate, the walk restarts at the change and re-evaluates there.
    private func firstSecond(from: Int, before limit: Int, inside wanted: Bool) -> Int? {
        let clock = WallClock(timeZone: timeZone)
        let day = WallClock.secondsPerDay
        let boundary = (wanted ? startMinute * 60 : endMinute * 60) % day
        var second = from
        while second < limit {
            let offset = clock.offset(at: second)
            let secondOfDay = WallClock.secondOfDay(at: second, offset: offset)
            if isInside(secondOfDay: secondOfDay) == wanted {
                return second
            }
            // Not yet `wanted`, so the local time is not at `boundary`; the distance is 1…86399 seconds.
            var distance = (boundary - secondOfDay) % day
            if distance <= 0 {
                distance += day
            }
            let candidate = second + distance
            if let change = clock.nextOffsetChange(after: second, through: candidate, offset: offset) {
                second = change
                continue
            }
            return candidate < limit ? candidate : nil
        }
        return nil
    }
}

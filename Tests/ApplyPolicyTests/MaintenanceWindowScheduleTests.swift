import ApplyPolicy
import Foundation
import Testing

/// Expected instants are written out in UTC. Offsets: Europe/Berlin CET +01 / CEST +02 (2026 switches at 01:00Z on
/// 03-29 and 10-25); America/New_York EST −05 / EDT −04 (2026 switches at 07:00Z on 03-08 and 06:00Z on 11-01).
@Suite("MaintenanceWindow schedule")
struct MaintenanceWindowScheduleTests {
    /// nextOpening(after: from) and closing(after: that opening), both exact.
    func expectOpening(
        _ encoded: String, after from: String, opens: String, closes: String?, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let window = try window(encoded)
        let opening = window.nextOpening(after: try at(from))
        #expect(opening == (try at(opens)), "\(encoded) after \(from)", sourceLocation: sourceLocation)
        let closing = opening.flatMap { window.closing(after: $0) }
        #expect(closing == (try closes.map(at)), "\(encoded) opened \(opens)", sourceLocation: sourceLocation)
    }

    @Test("an ordinary day in UTC and in Berlin summer time")
    func ordinaryDay() throws {
        try expectOpening("02:00-04:00@UTC", after: "2026-06-10T12:00:00Z", opens: "2026-06-11T02:00:00Z", closes: "2026-06-11T04:00:00Z")
        try expectOpening("02:00-04:00@Europe/Berlin", after: "2026-06-10T12:00:00Z", opens: "2026-06-11T00:00:00Z", closes: "2026-06-11T02:00:00Z")
        let berlin = try window("02:00-04:00@Europe/Berlin")
        #expect(berlin.contains(try at("2026-06-10T23:59:59Z")) == false)
        #expect(berlin.contains(try at("2026-06-11T00:00:00Z")))
        #expect(berlin.contains(try at("2026-06-11T01:59:59Z")))
        #expect(berlin.contains(try at("2026-06-11T02:00:00Z")) == false)
    }

    @Test("inside: nextOpening is the instant itself; closing is after it")
    func alreadyOpen() throws {
        let window = try window("02:00-04:00@UTC")
        let inside = try at("2026-06-11T03:00:00Z").addingTimeInterval(0.5)
        #expect(window.nextOpening(after: inside) == inside)
        #expect(window.closing(after: inside) == (try at("2026-06-11T04:00:00Z")))
        #expect(window.closing(after: try at("2026-06-11T03:59:59Z").addingTimeInterval(0.75)) == (try at("2026-06-11T04:00:00Z")))
        #expect(window.closing(after: try at("2026-06-11T12:00:00Z")) == nil)
        #expect(window.nextOpening(after: try at("2026-06-11T01:59:59Z").addingTimeInterval(0.5)) == (try at("2026-06-11T02:00:00Z")))
    }

    @Test("Europe/Berlin spring forward 2026-03-29: 02:00-04:00 is open one hour, from 03:00 CEST")
    func berlinSpringForward() throws {
        try expectOpening("02:00-04:00@Europe/Berlin", after: "2026-03-28T23:00:00Z", opens: "2026-03-29T01:00:00Z", closes: "2026-03-29T02:00:00Z")
        let window = try window("02:00-04:00@Europe/Berlin")
        #expect(window.contains(try at("2026-03-29T00:59:59Z")) == false)  // 01:59:59 CET
        #expect(window.contains(try at("2026-03-29T01:00:00Z")))  // 03:00:00 CEST
        // The day before, the whole two hours: 01:00Z-03:00Z.
        try expectOpening("02:00-04:00@Europe/Berlin", after: "2026-03-28T00:00:00Z", opens: "2026-03-28T01:00:00Z", closes: "2026-03-28T03:00:00Z")
        // The day after, in summer time.
        try expectOpening("02:00-04:00@Europe/Berlin", after: "2026-03-29T02:00:00Z", opens: "2026-03-30T00:00:00Z", closes: "2026-03-30T02:00:00Z")
    }

    @Test("Europe/Berlin spring forward: a window inside the skipped hour does not open that day")
    func berlinSkippedWindow() throws {
        try expectOpening("02:15-02:45@Europe/Berlin", after: "2026-03-28T23:00:00Z", opens: "2026-03-30T00:15:00Z", closes: "2026-03-30T00:45:00Z")
        try expectOpening("02:15-02:45@Europe/Berlin", after: "2026-03-28T00:00:00Z", opens: "2026-03-28T01:15:00Z", closes: "2026-03-28T01:45:00Z")
        // A window ending inside the gap closes at the jump.
        try expectOpening("01:30-02:30@Europe/Berlin", after: "2026-03-28T23:00:00Z", opens: "2026-03-29T00:30:00Z", closes: "2026-03-29T01:00:00Z")
    }

    @Test("Europe/Berlin fall back 2026-10-25: the repeated hour is inside twice")
    func berlinFallBack() throws {
        try expectOpening("02:00-03:00@Europe/Berlin", after: "2026-10-24T22:00:00Z", opens: "2026-10-25T00:00:00Z", closes: "2026-10-25T02:00:00Z")
        try expectOpening("02:30-03:30@Europe/Berlin", after: "2026-10-24T22:00:00Z", opens: "2026-10-25T00:30:00Z", closes: "2026-10-25T01:00:00Z")
        try expectOpening("02:30-03:30@Europe/Berlin", after: "2026-10-25T01:00:00Z", opens: "2026-10-25T01:30:00Z", closes: "2026-10-25T02:30:00Z")
        try expectOpening("02:30-02:45@Europe/Berlin", after: "2026-10-25T00:45:00Z", opens: "2026-10-25T01:30:00Z", closes: "2026-10-25T01:45:00Z")
        let window = try window("02:30-03:30@Europe/Berlin")
        #expect(window.contains(try at("2026-10-25T00:59:59Z")))  // 02:59:59 CEST
        #expect(window.contains(try at("2026-10-25T01:00:00Z")) == false)  // 02:00:00 CET
    }

    @Test("America/New_York spring forward 2026-03-08")
    func newYorkSpringForward() throws {
        // 02:00-03:00 local does not exist that day.
        try expectOpening(
            "02:00-03:00@America/New_York", after: "2026-03-08T05:00:00Z",
            opens: "2026-03-09T06:00:00Z", closes: "2026-03-09T07:00:00Z")
        // Ends in the gap: closes at the jump.
        try expectOpening(
            "01:30-02:30@America/New_York", after: "2026-03-08T05:00:00Z",
            opens: "2026-03-08T06:30:00Z", closes: "2026-03-08T07:00:00Z")
        // Starts in the gap: opens at the jump (03:00 EDT), not at a start time.
        try expectOpening(
            "02:30-03:30@America/New_York", after: "2026-03-08T05:00:00Z",
            opens: "2026-03-08T07:00:00Z", closes: "2026-03-08T07:30:00Z")
    }

    @Test("America/New_York fall back 2026-11-01: 01:00-02:00 is open two hours; 00:30-01:30 opens twice")
    func newYorkFallBack() throws {
        try expectOpening(
            "01:00-02:00@America/New_York", after: "2026-11-01T04:00:00Z",
            opens: "2026-11-01T05:00:00Z", closes: "2026-11-01T07:00:00Z")
        try expectOpening(
            "00:30-01:30@America/New_York", after: "2026-11-01T04:00:00Z",
            opens: "2026-11-01T04:30:00Z", closes: "2026-11-01T05:30:00Z")
        try expectOpening(
            "00:30-01:30@America/New_York", after: "2026-11-01T05:30:00Z",
            opens: "2026-11-01T06:00:00Z", closes: "2026-11-01T06:30:00Z")
        try expectOpening(
            "00:30-01:30@America/New_York", after: "2026-11-01T06:30:00Z",
            opens: "2026-11-02T05:30:00Z", closes: "2026-11-02T06:30:00Z")
        let window = try window("00:30-01:30@America/New_York")
        #expect(window.contains(try at("2026-11-01T05:59:59Z")) == false)  // 01:59:59 EDT
        #expect(window.contains(try at("2026-11-01T06:00:00Z")))  // 01:00:00 EST
    }

    @Test("windows across midnight, on ordinary and DST nights")
    func acrossMidnight() throws {
        try expectOpening("22:00-02:00@Europe/Berlin", after: "2026-06-10T12:00:00Z", opens: "2026-06-10T20:00:00Z", closes: "2026-06-11T00:00:00Z")
        try expectOpening("22:00-02:00@Europe/Berlin", after: "2026-03-28T12:00:00Z", opens: "2026-03-28T21:00:00Z", closes: "2026-03-29T01:00:00Z")
        try expectOpening("23:00-03:00@Europe/Berlin", after: "2026-03-28T12:00:00Z", opens: "2026-03-28T22:00:00Z", closes: "2026-03-29T01:00:00Z")
        try expectOpening("23:00-03:00@Europe/Berlin", after: "2026-10-24T12:00:00Z", opens: "2026-10-24T21:00:00Z", closes: "2026-10-25T02:00:00Z")
        try expectOpening(
            "22:00-02:00@America/New_York", after: "2026-10-31T12:00:00Z",
            opens: "2026-11-01T02:00:00Z", closes: "2026-11-01T07:00:00Z")
        try expectOpening(
            "23:00-02:30@America/New_York", after: "2026-03-07T12:00:00Z",
            opens: "2026-03-08T04:00:00Z", closes: "2026-03-08T07:00:00Z")
        try expectOpening("22:00-00:00@UTC", after: "2026-06-10T12:00:00Z", opens: "2026-06-10T22:00:00Z", closes: "2026-06-11T00:00:00Z")
        let window = try window("22:00-02:00@Europe/Berlin")
        #expect(window.contains(try at("2026-06-10T23:30:00Z")))  // 01:30 CEST
        #expect(window.contains(try at("2026-06-11T00:00:00Z")) == false)  // 02:00 CEST
        // Opened before midnight local, asked after midnight local: still inside, closes at 02:00.
        #expect(window.closing(after: try at("2026-06-10T22:30:00Z")) == (try at("2026-06-11T00:00:00Z")))
    }

    @Test("the whole day: always inside, never closes")
    func wholeDay() throws {
        let window = try window("00:00-24:00@Europe/Berlin")
        #expect(window.isWholeDay)
        for text in ["2026-03-29T01:00:00Z", "2026-10-25T01:30:00Z", "2026-06-10T22:00:00Z"] {
            let instant = try at(text)
            #expect(window.contains(instant))
            #expect(window.nextOpening(after: instant) == instant)
            #expect(window.closing(after: instant) == nil)
        }
    }

    @Test("out-of-range instants are never inside")
    func outOfRange() {
        let window = try? window("00:00-24:00@UTC")
        #expect(window?.contains(Date(timeIntervalSince1970: .nan)) == false)
        #expect(window?.nextOpening(after: Date(timeIntervalSince1970: .infinity)) == nil)
        #expect(window?.closing(after: Date(timeIntervalSince1970: -1e13)) == nil)
    }

    /// Every minute over DST days, ``MaintenanceWindow/contains(_:)`` agrees with a Gregorian calendar in the
    /// window's zone, and ``nextOpening(after:)`` / ``closing(after:)`` agree with a brute-force minute scan.
    @Test(
        "agrees with a Calendar minute scan around DST changes",
        arguments: [
            ("02:00-04:00@Europe/Berlin", "2026-03-28T00:00:00Z"), ("02:15-02:45@Europe/Berlin", "2026-03-28T00:00:00Z"),
            ("23:00-03:00@Europe/Berlin", "2026-03-28T00:00:00Z"), ("02:30-03:30@Europe/Berlin", "2026-10-24T00:00:00Z"),
            ("23:00-03:00@Europe/Berlin", "2026-10-24T00:00:00Z"), ("02:00-03:00@America/New_York", "2026-03-07T00:00:00Z"),
            ("02:30-03:30@America/New_York", "2026-03-07T00:00:00Z"), ("00:30-01:30@America/New_York", "2026-10-31T00:00:00Z"),
            ("22:00-02:00@America/New_York", "2026-10-31T00:00:00Z"), ("01:00-02:00@America/New_York", "2026-10-31T00:00:00Z"),
            ("00:00-00:30@Australia/Lord_Howe", "2026-04-04T00:00:00Z"), ("01:45-02:15@Australia/Lord_Howe", "2026-10-03T00:00:00Z"),
        ]
    )
    func agreesWithCalendarScan(encoded: String, startText: String) throws {
        let window = try window(encoded)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = window.timeZone
        let start = try at(startText)
        let minutes = 3 * 1_440
        let inside: [Bool] = (0..<minutes).map { minute in
            let parts = calendar.dateComponents([.hour, .minute], from: start.addingTimeInterval(TimeInterval(minute * 60)))
            let local = (parts.hour ?? -1) * 60 + (parts.minute ?? -1)
            return window.startMinute < window.endMinute
                ? local >= window.startMinute && local < window.endMinute
                : local >= window.startMinute || local < window.endMinute
        }
        // nextInside[i] / nextOutside[i]: the first minute ≥ i that is inside / outside, or nil within the scan.
        var nextInside = [Int?](repeating: nil, count: minutes + 1)
        var nextOutside = [Int?](repeating: nil, count: minutes + 1)
        for minute in stride(from: minutes - 1, through: 0, by: -1) {
            nextInside[minute] = inside[minute] ? minute : nextInside[minute + 1]
            nextOutside[minute] = inside[minute] ? nextOutside[minute + 1] : minute
        }
        var mismatches = 0
        for minute in 0..<(2 * 1_440) {
            let instant = start.addingTimeInterval(TimeInterval(minute * 60))
            if window.contains(instant) != inside[minute] {
                mismatches += 1
            }
            if let expectedOpening = nextInside[minute],
                window.nextOpening(after: instant) != start.addingTimeInterval(TimeInterval(expectedOpening * 60))
            {
                mismatches += 1
            }
            if inside[minute], let expectedClosing = nextOutside[minute],
                window.closing(after: instant) != start.addingTimeInterval(TimeInterval(expectedClosing * 60))
            {
                mismatches += 1
            }
            if !inside[minute], window.closing(after: instant) != nil {
                mismatches += 1
            }
        }
        #expect(mismatches == 0)
    }
}

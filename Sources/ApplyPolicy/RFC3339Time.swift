import Foundation

/// RFC 3339 times as used for deadlines: `2026-12-01T00:00:00Z`, `2026-12-01T01:00:00+01:00`.
///
/// Reading accepts `YYYY-MM-DDTHH:MM:SS` followed by an explicit zone, `Z` or `±HH:MM` (lowercase `t`/`z` too, as
/// RFC 3339 allows). Refused: a missing zone (the instant would depend on the reader's zone), fractional seconds
/// (deadlines are whole seconds, so the signed bytes round-trip exactly), leap second `60`, impossible dates
/// (`2026-02-30`). Writing always produces UTC with `Z` and whole seconds (fractions are dropped).
/// All arithmetic uses `Calendar(identifier: .gregorian)` in UTC, never the process's zone.
package enum RFC3339Time {
    /// Reads an RFC 3339 time with an explicit zone.
    ///
    /// - Parameters:
    ///   - text: the time text.
    ///   - field: what the value is, for the message (e.g. `apply deadline`).
    ///   - code: the error code to report (`.invalidDeadline` for deadlines).
    /// - Throws: ``ApplyPolicyError`` with `code` when the text is not such a time.
    package static func date(parsing text: String, field: String, code: ApplyPolicyError.Code) throws -> Date {
        let example = "e.g. 2026-12-01T00:00:00Z or 2026-12-01T01:00:00+01:00"
        func refuse(_ reason: String) -> ApplyPolicyError {
            ApplyPolicyError(code: code, message: "\(field) \(ApplyPolicyError.quoted(text)) \(reason)")
        }
        let chars = Array(text.unicodeScalars)
        let shape = "is not an RFC 3339 time YYYY-MM-DDTHH:MM:SS with a zone (\(example))"
        guard chars.count >= 19 else {
            throw refuse(shape)
        }
        guard let year = number(chars, 0, 4), chars[4] == "-", let month = number(chars, 5, 2), chars[7] == "-",
            let day = number(chars, 8, 2), chars[10] == "T" || chars[10] == "t",
            let hour = number(chars, 11, 2), chars[13] == ":", let minute = number(chars, 14, 2), chars[16] == ":",
            let second = number(chars, 17, 2)
        else {
            throw refuse(shape)
        }
        let zone = Array(chars[19...])
        let offsetSeconds: Int
        if zone.isEmpty {
            throw refuse("has no zone (add Z or an offset such as +01:00, \(example))")
        } else if zone.first == "." {
            throw refuse("has fractional seconds (deadlines are whole seconds, \(example))")
        } else if zone.count == 1, zone[0] == "Z" || zone[0] == "z" {
            offsetSeconds = 0
        } else if zone.count == 6, zone[0] == "+" || zone[0] == "-", zone[3] == ":",
            let offsetHours = number(zone, 1, 2), let offsetMinutes = number(zone, 4, 2),
            offsetHours <= 23, offsetMinutes <= 59
        {
            let magnitude = offsetHours * 3_600 + offsetMinutes * 60
            offsetSeconds = zone[0] == "-" ? -magnitude : magnitude
        } else {
            throw refuse(shape)
        }
        guard second <= 59 else {
            throw refuse("has second \(second) (seconds are 00–59; \(example))")
        }
        guard hour <= 23, minute <= 59, month >= 1, month <= 12, day >= 1, year >= 1 else {
            throw refuse("is not a valid date and time (\(example))")
        }
        let components = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        let calendar = utcCalendar
        guard let local = calendar.date(from: components),
            case let check = calendar.dateComponents([.year, .month, .day], from: local),
            check.year == year, check.month == month, check.day == day
        else {
            throw refuse("is not a valid date and time (\(example))")
        }
        return local.addingTimeInterval(TimeInterval(-offsetSeconds))
    }

    /// Writes an instant as RFC 3339 in UTC with whole seconds, e.g. `2026-12-01T00:00:00Z` (fractions dropped).
    package static func string(from date: Date) -> String {
        let whole = Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))
        let parts = utcCalendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: whole)
        func pad(_ value: Int?, _ width: Int) -> String {
            let text = String(value ?? 0)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(parts.year, 4))-\(pad(parts.month, 2))-\(pad(parts.day, 2))T"
            + "\(pad(parts.hour, 2)):\(pad(parts.minute, 2)):\(pad(parts.second, 2))Z"
    }

    /// A Gregorian calendar in UTC.
    private static var utcCalendar: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        return calendar
    }

    /// The value of `count` ASCII digits starting at `start`, or nil if any is not a digit.
    private static func number(_ chars: [Unicode.Scalar], _ start: Int, _ count: Int) -> Int? {
        guard start + count <= chars.count else {
            return nil
        }
        var value = 0
        for scalar in chars[start..<(start + count)] {
            guard scalar.value >= 0x30, scalar.value <= 0x39 else {
                return nil
            }
            value = value * 10 + Int(scalar.value - 0x30)
        }
        return value
    }
}

import Foundation

/// RFC 3339 timestamps: the one reader and writer of every signed time (docs/formats.md#times)
/// — manifests' `published`, `firstPublished`, `expires` and `apply.deadline`, restrictions'
/// `issued` and `expires`, trust roots' times — and of the times an operator types.
///
/// The signed grammar: `YYYY-MM-DDTHH:MM:SS`, an optional fraction of 1–9 digits, then `Z`
/// (UTC). Upper-case `T` and `Z`, a real calendar date (years 0001–9999), hour 00–23,
/// minute 00–59, second 00–59 (no leap second). Nothing before or after. A deadline an
/// operator types (`--deadline`) may also end in an offset `±HH:MM` (up to ±23:59),
/// converted to UTC, and have lower-case `t` and `z` (RFC 3339 §5.6); a signed document
/// never carries either. Written: always UTC, whole seconds, `Z`.
package enum RFC3339 {
    /// Why a text is not a time of the grammar.
    package enum Problem: Error, Sendable, Equatable {
        /// Not `YYYY-MM-DDTHH:MM:SS[.fraction]` and a zone.
        case shape
        /// Nothing after the seconds (and fraction).
        case noZone
        /// An offset where only `Z` is allowed (a signed time).
        case offset
        /// Second `60`.
        case leapSecond
        /// A date or time that does not exist (`2026-02-30`, hour 24).
        case invalidDate
    }

    /// The instant `text` names, or why it names none.
    /// - Parameter typed: what an operator typed: an offset `±HH:MM` and lower-case `t`/`z`
    ///   are accepted too.
    package static func read(_ text: String, typed: Bool = false) -> Result<Date, Problem> {
        let b = Array(text.utf8)
        guard b.count >= 19, b.count <= 35 else { return .failure(.shape) }
        func digits(_ from: Int, _ count: Int) -> Int? {
            guard from + count <= b.count else { return nil }
            var v = 0
            for k in from..<from + count {
                guard b[k] >= 0x30, b[k] <= 0x39 else { return nil }
                v = v * 10 + Int(b[k] - 0x30)
            }
            return v
        }
        guard b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"), b[10] == UInt8(ascii: "T") || typed && b[10] == UInt8(ascii: "t"),
            b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":"),
            let year = digits(0, 4), let month = digits(5, 2), let day = digits(8, 2),
            let hour = digits(11, 2), let minute = digits(14, 2), let second = digits(17, 2)
        else { return .failure(.shape) }
        var i = 19
        var fraction = 0.0
        if i < b.count, b[i] == UInt8(ascii: ".") {
            var n = 0
            while i + 1 + n < b.count, b[i + 1 + n] >= 0x30, b[i + 1 + n] <= 0x39 { n += 1 }
            guard n >= 1, n <= 9, let f = digits(i + 1, n) else { return .failure(.shape) }
            fraction = Double(f) / pow(10, Double(n))
            i += 1 + n
        }
        var offset = 0
        if i == b.count {
            return .failure(.noZone)
        } else if i + 1 == b.count, b[i] == UInt8(ascii: "Z") || typed && b[i] == UInt8(ascii: "z") {
            offset = 0
        } else if i + 6 == b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-"), b[i + 3] == UInt8(ascii: ":"),
            let hours = digits(i + 1, 2), let minutes = digits(i + 4, 2), hours <= 23, minutes <= 59
        {
            guard typed else { return .failure(.offset) }
            offset = (b[i] == UInt8(ascii: "-") ? -1 : 1) * (hours * 3_600 + minutes * 60)
        } else {
            return .failure(.shape)
        }
        guard second != 60 else { return .failure(.leapSecond) }
        guard year >= 1, (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year), hour <= 23, minute <= 59,
            second <= 59
        else { return .failure(.invalidDate) }
        let seconds = daysFromCivil(year: year, month: month, day: day) * 86_400 + hour * 3_600 + minute * 60 + second - offset
        return .success(Date(timeIntervalSince1970: Double(seconds) + fraction))
    }

    /// The instant a signed time names, or nil (``read(_:typed:)`` of a signed time).
    package static func parse(_ text: String) -> Date? {
        if case .success(let date) = read(text) { return date }
        return nil
    }

    /// Formats a date as `YYYY-MM-DDTHH:MM:SSZ` (whole seconds, rounded down).
    package static func format(_ date: Date) -> String {
        var seconds = time_t(floor(date.timeIntervalSince1970))
        var t = tm()
        gmtime_r(&seconds, &t)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02dZ", Int(t.tm_year) + 1900, Int(t.tm_mon) + 1,
            Int(t.tm_mday), Int(t.tm_hour), Int(t.tm_min), Int(t.tm_sec))
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (the civil-from-days algorithm
    /// run backwards; no time zone, no C library).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

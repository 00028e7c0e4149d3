import Foundation

/// RFC 3339 timestamps in UTC, as manifests carry them (`2026-05-01T12:00:00Z`).
package enum RFC3339 {
    /// Parses `YYYY-MM-DDTHH:MM:SS[.fraction]Z` strictly: UTC (`Z`) only, upper-case `T`
    /// and `Z`, real calendar dates, no leap second, at most 9 fraction digits.
    package static func parse(_ text: String) -> Date? {
        let b = Array(text.utf8)
        guard b.count >= 20, b.count <= 30, b.last == UInt8(ascii: "Z") else { return nil }
        func digits(_ from: Int, _ count: Int) -> Int? {
            var v = 0
            for k in from..<from + count {
                guard b[k] >= 0x30, b[k] <= 0x39 else { return nil }
                v = v * 10 + Int(b[k] - 0x30)
            }
            return v
        }
        guard b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"), b[10] == UInt8(ascii: "T"),
            b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":"),
            let year = digits(0, 4), let month = digits(5, 2), let day = digits(8, 2),
            let hour = digits(11, 2), let minute = digits(14, 2), let second = digits(17, 2)
        else { return nil }
        guard (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
            hour <= 23, minute <= 59, second <= 59
        else { return nil }
        var fraction = 0.0
        if b.count > 20 {
            guard b[19] == UInt8(ascii: "."), b.count - 21 >= 1, b.count - 21 <= 9,
                let f = digits(20, b.count - 21)
            else { return nil }
            fraction = Double(f) / pow(10, Double(b.count - 21))
        } else {
            guard b[19] == UInt8(ascii: "Z") else { return nil }
        }
        var t = tm()
        t.tm_year = Int32(year - 1900)
        t.tm_mon = Int32(month - 1)
        t.tm_mday = Int32(day)
        t.tm_hour = Int32(hour)
        t.tm_min = Int32(minute)
        t.tm_sec = Int32(second)
        let seconds = timegm(&t)
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
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
}

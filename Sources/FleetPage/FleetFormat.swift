import FleetReports
import Foundation

/// How the figures of a ``FleetSummary`` are written, the same in the text and on the page.
enum FleetFormat {
    /// `2026-11-25 17:04 UTC`.
    static func time(_ date: Date) -> String {
        let c = utcCalendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        return String(
            format: "%04d-%02d-%02d %02d:%02d UTC", c.year ?? 0, c.month ?? 0, c.day ?? 0, c.hour ?? 0, c.minute ?? 0)
    }

    /// A duration in the largest whole unit that fits: `90 s`, `30 min`, `1 h`, `2 d`.
    static func duration(seconds: Int) -> String {
        if seconds > 0, seconds % 86_400 == 0 { return "\(seconds / 86_400) d" }
        if seconds > 0, seconds % 3_600 == 0 { return "\(seconds / 3_600) h" }
        if seconds > 0, seconds % 60 == 0 { return "\(seconds / 60) min" }
        return "\(seconds) s"
    }

    /// `25.0 %`, or `–` when there is no rate.
    static func rate(_ value: Double?) -> String {
        guard let value else { return "–" }
        return String(format: "%.1f %%", value * 100)
    }

    /// Errors per device-hour: `0.42`, or `–` when the version had no use reported.
    static func perHour(_ value: Double?) -> String {
        guard let value, value.isFinite else { return "–" }
        return String(format: "%.2f", value)
    }

    /// `840 ms`, `2.4 s`, or `–`.
    static func ack(_ ms: Int?) -> String {
        guard let ms else { return "–" }
        if ms < 10_000 { return "\(ms) ms" }
        return String(format: "%.1f s", Double(ms) / 1000)
    }

    /// The time from staging to running: `3h 12m / 2d 1h` (median / p95), or `–`.
    static func wait(median: Int?, p95: Int?) -> String {
        guard let median else { return "–" }
        return duration(median) + (p95.map { " / " + duration($0) } ?? "")
    }

    /// Milliseconds in the largest two units: `850 ms`, `42 s`, `3h 12m`, `1h`, `2d 1h`.
    static func duration(_ ms: Int) -> String {
        if ms < 1_000 { return "\(ms) ms" }
        let seconds = ms / 1_000
        if seconds < 60 { return "\(seconds) s" }
        let units = [("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1)]
        guard let first = units.firstIndex(where: { seconds >= $0.1 }) else { return "0 s" }
        var parts = ["\(seconds / units[first].1)\(units[first].0)"]
        if first + 1 < units.count {
            let next = (seconds % units[first].1) / units[first + 1].1
            if next > 0 { parts.append("\(next)\(units[first + 1].0)") }
        }
        return parts.joined(separator: " ")
    }

    /// `25 %`, `25 % paused`, or `–`.
    static func rollout(_ seen: RolloutSeen?) -> String {
        guard let seen else { return "–" }
        return seen.paused ? "\(seen.percent) % paused" : "\(seen.percent) %"
    }

    /// The total of a by-reason count.
    static func total(_ byReason: [String: Int]) -> Int { byReason.values.reduce(0, +) }

    /// `timed-out 3, page-crashed 2`: largest first, then by name.
    static func reasons(_ byReason: [String: Int]) -> String {
        sortedReasons(byReason).map { "\($0.reason) \($0.count)" }.joined(separator: ", ")
    }

    /// The entries of a by-reason count, largest first, then by name.
    static func sortedReasons(_ byReason: [String: Int]) -> [(reason: String, count: Int)] {
        byReason.filter { $0.value != 0 }.map { (reason: $0.key, count: $0.value) }
            .sorted { $0.count != $1.count ? $0.count > $1.count : $0.reason < $1.reason }
    }

    static let utcCalendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? TimeZone(secondsFromGMT: 0) ?? calendar.timeZone
        return calendar
    }()
}

import FleetReports
import Foundation

/// The time axis the adoption chart and the rollout lanes share: one mapping from time to
/// x, so a rollout step sits right under the adoption it caused.
struct TimeScale {
    let start: Date
    let end: Date
    let left: Double
    let right: Double

    /// The span of the summary's timeline and rollouts (an hour either side of a single instant).
    init(summary: FleetSummary, left: Double, right: Double) {
        let times = summary.timeline.map(\.time) + summary.rollouts.map(\.time)
        let first = times.min() ?? summary.generated
        let last = times.max() ?? summary.generated
        if last.timeIntervalSince(first) < 60 {
            start = first.addingTimeInterval(-3_600)
            end = last.addingTimeInterval(3_600)
        } else {
            start = first
            end = last
        }
        self.left = left
        self.right = right
    }

    func x(_ time: Date) -> Double {
        let span = end.timeIntervalSince(start)
        guard span > 0 else { return left }
        let fraction = min(max(time.timeIntervalSince(start) / span, 0), 1)
        return left + fraction * (right - left)
    }

    /// At most about eight ticks on whole minutes, hours or days (UTC), with their labels.
    func ticks() -> [(x: Double, label: String)] {
        let steps: [Double] = [60, 300, 900, 1_800, 3_600, 10_800, 21_600, 43_200, 86_400, 172_800, 604_800, 2_592_000]
        let span = end.timeIntervalSince(start)
        let step = steps.first { span / $0 <= 8 } ?? (span / 8).rounded(.up)
        var t = (start.timeIntervalSince1970 / step).rounded(.up) * step
        var out: [(Double, String)] = []
        while t <= end.timeIntervalSince1970 {
            out.append((x(Date(timeIntervalSince1970: t)), label(Date(timeIntervalSince1970: t), step: step, span: span)))
            t += step
        }
        return out
    }

    private func label(_ date: Date, step: Double, span: Double) -> String {
        let c = FleetFormat.utcCalendar.dateComponents([.month, .day, .hour, .minute], from: date)
        let day = String(format: "%02d-%02d", c.month ?? 0, c.day ?? 0)
        let clock = String(format: "%02d:%02d", c.hour ?? 0, c.minute ?? 0)
        if step >= 86_400 { return day }
        return span > 86_400 ? "\(day) \(clock)" : clock
    }
}

/// A count axis from 0 to a round top (1, 2 or 5 times a power of ten per step).
struct CountScale {
    let top: Int
    let step: Int
    let bottomY: Double
    let topY: Double

    init(maximum: Int, bottomY: Double, topY: Double) {
        var step = 1
        var candidates = [1, 2, 5]
        while true {
            if let fit = candidates.first(where: { maximum <= $0 * 5 }) {
                step = fit
                break
            }
            candidates = candidates.map { $0 * 10 }
        }
        self.step = step
        top = max(step, ((maximum + step - 1) / step) * step)
        self.bottomY = bottomY
        self.topY = topY
    }

    func y(_ value: Double) -> Double {
        bottomY - value / Double(top) * (bottomY - topY)
    }

    var ticks: [Int] { Array(stride(from: 0, through: top, by: step)) }
}

/// Numbers in SVG coordinates: one decimal at most, no exponent.
func svg(_ value: Double) -> String {
    let rounded = (value * 10).rounded() / 10
    if rounded == rounded.rounded() { return String(Int(rounded)) }
    return String(format: "%.1f", rounded)
}

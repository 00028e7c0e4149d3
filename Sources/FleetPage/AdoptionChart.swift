import FleetReports
import Foundation

/// The page's first figure: devices on each version over time as stacked areas (oldest
/// version at the bottom), and under it, on the same time axis, one lane per version with
/// the rollout's steps and pauses as devices saw them.
struct AdoptionChart {
    let summary: FleetSummary
    let palette: VersionPalette

    static let width = 1000.0
    static let left = 110.0
    static let right = 980.0
    static let top = 14.0
    static let plotHeight = 260.0
    static let laneHeight = 24.0
    static let laneGap = 8.0

    func render() -> String {
        let bottom = Self.top + Self.plotHeight
        let time = TimeScale(summary: summary, left: Self.left, right: Self.right)
        let points = summary.timeline.sorted { $0.time < $1.time }
        let maximum = points.map { $0.devices.values.reduce(0, +) }.max() ?? 0
        let count = CountScale(maximum: maximum, bottomY: bottom, topY: Self.top)
        let laneVersions = palette.oldestFirst.reversed().filter { v in summary.rollouts.contains { $0.version == v } }
        let lanesTop = bottom + 58
        let lanesBottom = lanesTop + Double(max(laneVersions.count, 1)) * (Self.laneHeight + Self.laneGap)
        let height = lanesBottom + 4

        var out = "<svg class=\"chart\" id=\"adoption\" width=\"\(svg(Self.width))\" "
        out += "height=\"\(svg(height))\" viewBox=\"0 0 \(svg(Self.width)) \(svg(height))\" role=\"img\" "
        out += "aria-label=\"Devices per version over time, and the rollout steps\">"
        out += "<defs><pattern id=\"paused\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
        out += "<rect width=\"6\" height=\"6\" fill=\"#f9fafb\"/><rect width=\"2\" height=\"6\" fill=\"#c4c9d1\"/></pattern></defs>"
        // Grid: counts across the plot, times down through plot and lanes.
        for tick in count.ticks {
            let y = svg(count.y(Double(tick)))
            out += "<line class=\"grid\" x1=\"\(svg(Self.left))\" x2=\"\(svg(Self.right))\" y1=\"\(y)\" y2=\"\(y)\"/>"
            out += "<text class=\"axis\" x=\"\(svg(Self.left - 8))\" y=\"\(y)\" dy=\"4\" text-anchor=\"end\">\(tick)</text>"
        }
        for tick in time.ticks() {
            let x = svg(tick.x)
            out += "<line class=\"grid\" x1=\"\(x)\" x2=\"\(x)\" y1=\"\(svg(Self.top))\" y2=\"\(svg(lanesBottom))\"/>"
            out += "<text class=\"axis\" x=\"\(x)\" y=\"\(svg(bottom + 18))\" text-anchor=\"middle\">\(HTMLText.escape(tick.label))</text>"
        }
        out += areas(points, time: time, count: count)
        if points.isEmpty {
            out += "<text class=\"empty\" x=\"\(svg((Self.left + Self.right) / 2))\" y=\"\(svg(Self.top + Self.plotHeight / 2))\" "
            out += "text-anchor=\"middle\">No devices reported yet</text>"
        }
        out += "<line class=\"baseline\" x1=\"\(svg(Self.left))\" x2=\"\(svg(Self.right))\" y1=\"\(svg(bottom))\" y2=\"\(svg(bottom))\"/>"
        out += "<text class=\"lanes-title\" x=\"\(svg(Self.left))\" y=\"\(svg(lanesTop - 10))\">Rollout as devices saw it (times in UTC)</text>"
        if laneVersions.isEmpty {
            out += "<text class=\"empty\" x=\"\(svg(Self.left + 8))\" y=\"\(svg(lanesTop + 16))\">No rollout seen</text>"
        }
        for (index, version) in laneVersions.enumerated() {
            let y = lanesTop + Double(index) * (Self.laneHeight + Self.laneGap)
            out += lane(version, y: y, time: time)
        }
        return out + "</svg>"
    }

    /// One closed path per version: its band between the versions below it and itself.
    private func areas(_ points: [TimelinePoint], time: TimeScale, count: CountScale) -> String {
        guard !points.isEmpty else { return "" }
        // A single instant is drawn as a narrow column rather than a line of no width.
        var xs = points.map { time.x($0.time) }
        var columns = points
        if points.count == 1 {
            xs = [xs[0] - 4, xs[0] + 4]
            columns = [points[0], points[0]]
        }
        var below = [Int](repeating: 0, count: columns.count)
        var out = ""
        for version in palette.oldestFirst {
            let values = columns.map { $0.devices[version] ?? 0 }
            guard values.contains(where: { $0 > 0 }) else { continue }
            let upper = zip(below, values).map { $0 + $1 }
            var d = ""
            for i in columns.indices {
                d += (i == 0 ? "M" : "L") + "\(svg(xs[i])) \(svg(count.y(Double(upper[i])))) "
            }
            for i in columns.indices.reversed() {
                d += "L\(svg(xs[i])) \(svg(count.y(Double(below[i])))) "
            }
            let last = values[values.count - 1]
            out += "<path class=\"area\" data-version=\"\(HTMLText.escape(version))\" fill=\"\(palette.colour(version))\" "
            out += "d=\"\(d)Z\"><title>\(HTMLText.escape(version)): \(last) device\(last == 1 ? "" : "s") at the end</title></path>"
            below = upper
        }
        return out
    }

    /// A version's rollout lane: a segment per step or pause, from when the first device
    /// saw it until the next change (or the end of the axis).
    private func lane(_ version: String, y: Double, time: TimeScale) -> String {
        let colour = palette.colour(version)
        let steps = summary.rollouts.filter { $0.version == version }.sorted { $0.time < $1.time }
        var out = "<text class=\"lane-label\" x=\"\(svg(Self.left - 8))\" y=\"\(svg(y + Self.laneHeight / 2))\" dy=\"4\" "
        out += "text-anchor=\"end\">\(HTMLText.escape(version))</text>"
        for (index, step) in steps.enumerated() {
            let x0 = time.x(step.time)
            let x1 = index + 1 < steps.count ? time.x(steps[index + 1].time) : Self.right
            let width = max(x1 - x0, 2)
            let seen = step.rollout
            let label = seen.paused ? "paused at \(seen.percent) %" : "\(seen.percent) %"
            // A step's mark in the adoption plot above, so the areas read against it.
            out += "<line class=\"step\" x1=\"\(svg(x0))\" x2=\"\(svg(x0))\" y1=\"\(svg(Self.top))\" y2=\"\(svg(y))\" "
            out += "stroke=\"\(seen.paused ? "#6b7280" : colour)\"/>"
            out += "<rect class=\"rollout\" data-version=\"\(HTMLText.escape(version))\" data-percent=\"\(seen.percent)\" "
            out += "data-paused=\"\(seen.paused)\" x=\"\(svg(x0))\" y=\"\(svg(y))\" width=\"\(svg(width))\" height=\"\(svg(Self.laneHeight))\" "
            if seen.paused {
                out += "fill=\"url(#paused)\" stroke=\"\(colour)\""
            } else {
                out += "fill=\"\(colour)\" fill-opacity=\"\(svg(0.2 + 0.6 * Double(min(max(seen.percent, 0), 100)) / 100))\""
            }
            out += "><title>\(HTMLText.escape(version)): \(label) from \(FleetFormat.time(step.time))</title></rect>"
            if width >= 60 {
                out += "<text class=\"lane-text\" x=\"\(svg(x0 + 6))\" y=\"\(svg(y + Self.laneHeight / 2))\" dy=\"4\">\(label)</text>"
            }
        }
        return out
    }
}

import FleetReports
import Foundation

/// The page's second figure: per version, the share of its trials that rolled back, as a
/// bar split by the rollbacks' reasons.
struct FailureChart {
    let summary: FleetSummary
    let palette: VersionPalette

    static let width = 1000.0
    static let left = 110.0
    static let barWidth = 520.0
    static let rowHeight = 30.0
    static let barHeight = 18.0
    static let top = 26.0

    /// Versions with a trial or a rollback, newest first.
    var rows: [VersionSummary] {
        summary.versions.filter { $0.trials > 0 || FleetFormat.total($0.rollbacks) > 0 }
    }

    func render() -> String {
        let rows = rows
        let height = Self.top + Double(max(rows.count, 1)) * Self.rowHeight + 6
        let highest = rows.compactMap(\.failureRate).max() ?? 0
        let scale = [0.05, 0.1, 0.2, 0.25, 0.5, 1].first { highest <= $0 } ?? 1
        let x = { (rate: Double) in Self.left + min(rate / scale, 1) * Self.barWidth }

        var out = "<svg class=\"chart\" id=\"failures\" width=\"\(svg(Self.width))\" "
        out += "height=\"\(svg(height))\" viewBox=\"0 0 \(svg(Self.width)) \(svg(height))\" role=\"img\" "
        out += "aria-label=\"Share of trials rolled back per version, by reason\">"
        for fraction in [0, 0.5, 1.0] {
            let tx = svg(x(scale * fraction))
            out += "<line class=\"grid\" x1=\"\(tx)\" x2=\"\(tx)\" y1=\"\(svg(Self.top - 6))\" y2=\"\(svg(height - 4))\"/>"
            out += "<text class=\"axis\" x=\"\(tx)\" y=\"\(svg(Self.top - 10))\" text-anchor=\"middle\">"
            out += "\(FleetFormat.rate(scale * fraction).replacingOccurrences(of: ".0 ", with: " "))</text>"
        }
        if rows.isEmpty {
            out += "<text class=\"empty\" x=\"\(svg(Self.left + 8))\" y=\"\(svg(Self.top + 18))\">No trials yet</text>"
        }
        for (index, version) in rows.enumerated() {
            let y = Self.top + Double(index) * Self.rowHeight
            let name = HTMLText.escape(version.version)
            out += "<rect class=\"swatch\" x=\"8\" y=\"\(svg(y + 5))\" width=\"10\" height=\"10\" fill=\"\(palette.colour(version.version))\"/>"
            out += "<text class=\"lane-label\" x=\"\(svg(Self.left - 8))\" y=\"\(svg(y + Self.barHeight / 2))\" dy=\"4\" "
            out += "text-anchor=\"end\">\(name)</text>"
            out += "<rect class=\"track\" x=\"\(svg(Self.left))\" y=\"\(svg(y))\" width=\"\(svg(Self.barWidth))\" height=\"\(svg(Self.barHeight))\"/>"
            let rate = version.failureRate ?? 0
            let reasons = FleetFormat.sortedReasons(version.rollbacks)
            let total = reasons.reduce(0) { $0 + $1.count }
            var at = Self.left
            for entry in reasons where total > 0 {
                // Devices may roll back for more than one reason: the reasons share the bar
                // in proportion, and the bar's length is the rate.
                let width = (x(rate) - Self.left) * Double(entry.count) / Double(total)
                out += "<rect class=\"failure\" data-version=\"\(name)\" data-reason=\"\(HTMLText.escape(entry.reason))\" "
                out += "x=\"\(svg(at))\" y=\"\(svg(y))\" width=\"\(svg(width))\" height=\"\(svg(Self.barHeight))\" "
                out += "fill=\"\(ReasonPalette.colour(entry.reason))\"><title>\(name): \(HTMLText.escape(entry.reason)) "
                out += "\(entry.count)</title></rect>"
                at += width
            }
            var caption = "\(FleetFormat.rate(version.failureRate)) of \(version.trials) trial\(version.trials == 1 ? "" : "s")"
            if !reasons.isEmpty { caption += " · " + FleetFormat.reasons(version.rollbacks) }
            out += "<text class=\"bar-text\" x=\"\(svg(Self.left + Self.barWidth + 10))\" y=\"\(svg(y + Self.barHeight / 2))\" "
            out += "dy=\"4\">\(HTMLText.escape(caption))</text>"
        }
        return out + "</svg>"
    }

    /// The reasons the bars show, for the legend.
    var reasonsShown: [String] {
        Array(Set(rows.flatMap { $0.rollbacks.filter { $0.value > 0 }.keys })).sorted()
    }
}

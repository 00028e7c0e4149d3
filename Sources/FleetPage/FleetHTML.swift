import ClientFoundation
import FleetReports
import Foundation

/// The fleet page: one self-contained HTML document of a ``FleetSummary``, what
/// `clientctl fleet status --html` writes and the collector serves at `/`
/// (docs/fleet-reports.md#seeing-the-fleet).
///
/// Inline SVG and CSS only: no script, no font, image or style from anywhere, and a
/// Content-Security-Policy of `default-src 'none'` that keeps it so in a browser. Every
/// string from the summary is escaped. Every figure sits in an element naming it
/// (`data-version`, `data-field`, and `data-reason` for counts by reason), so a test or a
/// scraper reads the numbers from the DOM. Pure: the same summary gives the same bytes.
package enum FleetHTML {
    /// The Content-Security-Policy of the page (also sent as a header by the collector).
    package static let contentSecurityPolicy =
        "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; base-uri 'none'; form-action 'none'"

    /// The page of `summary`.
    package static func render(_ summary: FleetSummary) -> String {
        let cohort = summary.labels.map { LabelFilter.text($0) } ?? ""
        let title = "\(summary.app) · \(summary.channel)" + (cohort.isEmpty ? "" : " · \(cohort)")
        var out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        out += "<meta http-equiv=\"Content-Security-Policy\" content=\"\(contentSecurityPolicy)\">"
        out += "<meta name=\"referrer\" content=\"no-referrer\"><meta name=\"viewport\" content=\"width=device-width\">"
        out += "<title>\(HTMLText.escape(title)) — fleet</title><style>\(style)</style></head><body>\n"
        out += sections(summary)
        out += "<footer>clientctl fleet status · counts are of distinct devices</footer>\n</body></html>\n"
        return out
    }

    /// The page's body without its footer: the header, the charts and the tables, for a
    /// page that holds the fleet's figures among its own (the operator's console).
    package static func sections(_ summary: FleetSummary) -> String {
        let palette = VersionPalette(summary)
        let cohort = summary.labels.map { LabelFilter.text($0) } ?? ""
        var out = "<header><h1>\(HTMLText.escape(summary.app)) <span class=\"channel\">· \(HTMLText.escape(summary.channel))</span>"
        if !cohort.isEmpty { out += " <span class=\"channel\" data-field=\"labels\">· \(HTMLText.escape(cohort))</span>" }
        out += "</h1>"
        out += "<p class=\"totals\"><span data-field=\"devices\">\(summary.devices)</span> device\(summary.devices == 1 ? "" : "s")"
        out += " · <span data-field=\"silentDevices\">\(summary.silentDevices)</span> silent for more than "
        out += "<span data-field=\"windowSeconds\" data-value=\"\(summary.windowSeconds)\">"
        out += "\(FleetFormat.duration(seconds: summary.windowSeconds))</span>"
        out += " · as of <time data-field=\"generated\">\(FleetFormat.time(summary.generated))</time></p></header>\n"
        if summary.versions.isEmpty && summary.timeline.isEmpty {
            out += "<p class=\"empty\" id=\"empty\">No reports yet for this app and channel.</p>\n"
        }
        out += "<section><h2>Adoption</h2>\(legend(palette))\(AdoptionChart(summary: summary, palette: palette).render())</section>\n"
        let failures = FailureChart(summary: summary, palette: palette)
        out += "<section><h2>Rolled back, per version</h2>\(reasonLegend(failures.reasonsShown))\(failures.render())</section>\n"
        out += "<section><h2>Versions</h2>\(versionTable(summary, palette))\(withoutVersion(summary))</section>\n"
        out += reasonTable(summary)
        out += silentTable(summary)
        return out
    }

    private static func legend(_ palette: VersionPalette) -> String {
        guard !palette.oldestFirst.isEmpty else { return "" }
        var out = "<ul class=\"legend\">"
        for version in palette.oldestFirst.reversed() {
            out += "<li>\(swatch(palette.colour(version)))\(HTMLText.escape(name(version)))</li>"
        }
        return out + "</ul>"
    }

    private static func reasonLegend(_ reasons: [String]) -> String {
        guard !reasons.isEmpty else { return "" }
        return "<ul class=\"legend\">" + reasons.map { "<li>\(swatch(ReasonPalette.colour($0)))\(HTMLText.escape($0))</li>" }.joined() + "</ul>"
    }

    private static func swatch(_ colour: String) -> String {
        "<svg class=\"swatch\" width=\"12\" height=\"12\" aria-hidden=\"true\"><rect width=\"12\" height=\"12\" fill=\"\(colour)\"/></svg>"
    }

    private static func cell(_ version: String, _ field: String, _ text: String, value: String? = nil) -> String {
        var out = "<td class=\"num\" data-version=\"\(HTMLText.escape(version))\" data-field=\"\(field)\""
        if let value { out += " data-value=\"\(HTMLText.escape(value))\"" }
        return out + ">\(HTMLText.escape(text))</td>"
    }

    private static func versionTable(_ summary: FleetSummary, _ palette: VersionPalette) -> String {
        guard !summary.releases.isEmpty || summary.other != nil else {
            return summary.devicesWithoutVersion > 0 ? "" : "<p class=\"empty\">No versions reported.</p>"
        }
        let headers = [
            "Now", "Installs", "Trials", "Commits", "Rolled back", "Failed", "Black&shy;listed", "Web process died", "Errors per device-hour",
            "Download failed", "Refused", "Median ack", "Staged", "Staged to running (median / p95)", "Download deferred", "From mirrors", "Rollout",
        ]
        var out = "<table id=\"versions\"><thead><tr><th>Version</th>"
        out += headers.map { "<th class=\"num\">\($0)</th>" }.joined() + "</tr></thead><tbody>"
        // The devices that ran no version yet are no release's row (``withoutVersion(_:)``).
        for v in summary.releases { out += versionRow(v, label: v.version, palette) }
        if let other = summary.other {
            // The versions not listed (docs/fleet-reports.md#the-fleet-summary), as one row.
            out += versionRow(other.figures, label: "\(other.versions) other version\(other.versions == 1 ? "" : "s")", palette)
        }
        return out + "</tbody></table>"
    }

    private static func versionRow(_ v: VersionSummary, label: String, _ palette: VersionPalette) -> String {
        let name = v.version
        var out = "<tr><th scope=\"row\" data-version=\"\(HTMLText.escape(name))\">\(swatch(palette.colour(name)))\(HTMLText.escape(label))</th>"
        out += cell(name, "devicesNow", "\(v.devicesNow)")
        out += cell(name, "installs", "\(v.installs)")
        out += cell(name, "trials", "\(v.trials)")
        out += cell(name, "commits", "\(v.commits)")
        out += cell(name, "rollbacks", "\(FleetFormat.total(v.rollbacks))")
        out += cell(name, "failureRate", FleetFormat.rate(v.failureRate), value: v.failureRate.map { "\($0)" } ?? "")
        out += cell(name, "blacklists", "\(FleetFormat.total(v.blacklists))")
        out += cell(name, "webProcessDeaths", "\(FleetFormat.total(v.webProcessDeaths))")
        out += cell(
            name, "errorsPerDeviceHour", FleetFormat.perHour(v.errorsPerDeviceHour), value: v.errorsPerDeviceHour.map { "\($0)" } ?? "")
        out += cell(name, "downloadFailures", "\(FleetFormat.total(v.downloadFailures))")
        out += cell(name, "refusals", "\(FleetFormat.total(v.refusals))")
        out += cell(name, "medianAckMs", FleetFormat.ack(v.medianAckMs), value: v.medianAckMs.map { "\($0)" } ?? "")
        out += cell(name, "staged", v.staged.map { "\($0)" } ?? "–", value: v.staged.map { "\($0)" } ?? "")
        out += cell(
            name, "stagedToRunning", FleetFormat.wait(median: v.stagedToRunningMedianMs, p95: v.stagedToRunningP95Ms),
            value: v.stagedToRunningMedianMs.map { "\($0)" } ?? "")
        out += cell(
            name, "downloadDeferrals", v.downloadDeferrals.map { "\(FleetFormat.total($0))" } ?? "–",
            value: v.downloadDeferrals.map { "\(FleetFormat.total($0))" } ?? "")
        out += cell(name, "mirrorShare", FleetFormat.rate(v.mirrorShare), value: v.mirrorShare.map { "\($0)" } ?? "")
        out += cell(
            name, "rollout", FleetFormat.rollout(v.rollout),
            value: v.rollout.map { "\($0.percent)\($0.paused ? " paused" : "")" } ?? "")
        return out + "</tr>"
    }

    /// The line of the devices whose reports name no version yet (``FleetSummary/noVersion``),
    /// empty when there are none.
    private static func withoutVersion(_ summary: FleetSummary) -> String {
        let n = summary.devicesWithoutVersion
        guard n > 0 else { return "" }
        return "<p class=\"waiting\"><span data-field=\"devicesWithoutVersion\">\(n)</span> device\(n == 1 ? " has" : "s have") "
            + "not run a version yet.</p>"
    }

    /// A version as the page names it: ``FleetSummary/noVersion`` is `no version yet`.
    private static func name(_ version: String) -> String { version == FleetSummary.noVersion ? "no version yet" : version }

    private static func reasonTable(_ summary: FleetSummary) -> String {
        let kinds: [(String, String, KeyPath<VersionSummary, [String: Int]>)] = [
            ("rollbacks", "rolled back", \.rollbacks), ("blacklists", "blacklisted", \.blacklists),
            ("webProcessDeaths", "web process died", \.webProcessDeaths), ("downloadFailures", "download failed", \.downloadFailures),
            ("refusals", "refused by a check", \.refusals), ("downloadDeferrals", "download deferred", \.deferrals),
        ]
        var rows = ""
        for v in summary.releases {
            for (field, what, path) in kinds {
                for entry in FleetFormat.sortedReasons(v[keyPath: path]) {
                    rows += "<tr><td>\(HTMLText.escape(v.version))</td><td>\(what)</td><td>\(HTMLText.escape(entry.reason))</td>"
                    rows += "<td class=\"num\" data-version=\"\(HTMLText.escape(v.version))\" data-field=\"\(field)\" "
                    rows += "data-reason=\"\(HTMLText.escape(entry.reason))\">\(entry.count)</td></tr>"
                }
            }
        }
        guard !rows.isEmpty else { return "" }
        return "<section><h2>Why</h2><table id=\"reasons\"><thead><tr><th>Version</th><th>What</th><th>Reason</th><th class=\"num\">Devices</th>"
            + "</tr></thead><tbody>\(rows)</tbody></table></section>\n"
    }

    private static func silentTable(_ summary: FleetSummary) -> String {
        guard !summary.silent.isEmpty else { return "" }
        var out = "<section><h2>Silent devices</h2><table id=\"silent\"><thead><tr><th>Device</th><th>Last seen</th><th>Running</th>"
        out += "</tr></thead><tbody>"
        for device in summary.silent {
            let id = HTMLText.escape(device.device.text)
            out += "<tr><td class=\"mono\" data-device=\"\(id)\" data-field=\"device\">\(id)</td>"
            out += "<td data-device=\"\(id)\" data-field=\"lastSeen\">\(FleetFormat.time(device.lastSeen))</td>"
            out += "<td data-device=\"\(id)\" data-field=\"running\">\(HTMLText.escape(name(device.running)))</td></tr>"
        }
        if summary.silent.count < summary.silentDevices {
            out += "<tr><td colspan=\"3\">… and \(summary.silentDevices - summary.silent.count) more</td></tr>"
        }
        return out + "</tbody></table></section>\n"
    }

    /// The page's style sheet (inline in the page; a page with a stricter policy serves it
    /// as a file of its own).
    package static let style = """
        body{margin:0 auto;padding:24px;max-width:1040px;font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;\
        color:#111827;background:#fff}\
        h1{font-size:22px;margin:0 0 4px}h1 .channel{color:#6b7280;font-weight:500}\
        h2{font-size:16px;margin:28px 0 8px}.totals{margin:0;color:#374151}\
        .legend{list-style:none;display:flex;flex-wrap:wrap;gap:6px 16px;padding:0;margin:0 0 8px}\
        .legend li{display:flex;align-items:center;gap:6px}.swatch{flex:none;vertical-align:-1px;margin-right:6px}\
        .chart{display:block;max-width:100%;height:auto}.chart text{font-size:12px;fill:#374151}\
        .chart .empty{fill:#6b7280;font-size:14px}.grid{stroke:#e5e7eb;stroke-width:1}\
        .baseline{stroke:#6b7280;stroke-width:1}.area{stroke:#fff;stroke-width:.5}\
        .step{stroke-width:1;stroke-dasharray:3 3;opacity:.7}.lanes-title{font-weight:600}\
        .chart .lane-text{fill:#111827;font-size:11px;paint-order:stroke;stroke:#fff;stroke-width:3px}.track{fill:#f3f4f6}\
        table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums}\
        th,td{padding:5px 6px;border-bottom:1px solid #e5e7eb;text-align:left;white-space:nowrap}\
        thead th{font-size:12px;color:#4b5563;font-weight:600;white-space:normal;vertical-align:bottom}\
        td.num,th.num{text-align:right}\
        .mono{font-family:ui-monospace,monospace;font-size:12px}.empty{color:#6b7280}\
        footer{margin-top:32px;color:#9ca3af;font-size:12px}
        """
}

import ClientFoundation
import FleetReports
import Foundation

/// The text `clientctl fleet status` prints: a table of the versions' figures, their
/// reasons, and the devices that went silent (docs/fleet-reports.md#seeing-the-fleet).
///
/// Pure: the same summary gives the same text, byte for byte. Every string of the summary
/// (app, channel, versions, reasons, device ids, what a silent device ran) is the
/// collector's, which holds what devices sent and may be anyone's: each is written through
/// `TerminalText.escaped` (ClientFoundation), so no control character or bidi override reaches
/// the terminal.
package enum FleetText {
    /// The text of `summary`, ending with a newline.
    package static func render(_ summary: FleetSummary) -> String {
        // A cohort's figures (`--label`) say whose they are.
        let cohort = summary.labels.map { " · labels \(clean(LabelFilter.text($0)))" } ?? ""
        var out = "\(clean(summary.app)) · \(clean(summary.channel))\(cohort): \(summary.devices) device\(summary.devices == 1 ? "" : "s"), "
        out += "\(summary.silentDevices) silent (window \(FleetFormat.duration(seconds: summary.windowSeconds))), "
        out += "as of \(FleetFormat.time(summary.generated))\n"
        // The versions not listed (docs/fleet-reports.md#the-fleet-summary) as one last row.
        let versions = summary.versions + (summary.other.map { [folded($0)] } ?? [])
        guard !versions.isEmpty else {
            return out + "\nNo reports yet.\n"
        }
        out += "\n" + table(versions)
        let reasons = reasonLines(versions)
        if !reasons.isEmpty {
            out += "\nBy reason (devices):\n" + reasons.joined()
        }
        if !summary.silent.isEmpty {
            out += "\nSilent devices (\(summary.silentDevices), longest silent first"
            out += summary.silent.count < summary.silentDevices ? ", first \(summary.silent.count)):\n" : "):\n"
            for device in summary.silent {
                out += "  \(device.device)  last seen \(FleetFormat.time(device.lastSeen))  running \(clean(device.running))\n"
            }
        }
        return out
    }

    /// The columns of the table: header, alignment (right for numbers) and cell.
    private static let columns: [(header: String, right: Bool, cell: @Sendable (VersionSummary) -> String)] = [
        ("VERSION", false, { clean($0.version) }),
        ("NOW", true, { "\($0.devicesNow)" }),
        ("INSTALLS", true, { "\($0.installs)" }),
        ("TRIALS", true, { "\($0.trials)" }),
        ("COMMITS", true, { "\($0.commits)" }),
        ("ROLLBACKS", true, { "\(FleetFormat.total($0.rollbacks))" }),
        ("FAILED", true, { FleetFormat.rate($0.failureRate) }),
        ("BLACKLISTS", true, { "\(FleetFormat.total($0.blacklists))" }),
        ("WEB DEATHS", true, { "\(FleetFormat.total($0.webProcessDeaths))" }),
        ("ERRORS/DEV-H", true, { FleetFormat.perHour($0.errorsPerDeviceHour) }),
        ("MEDIAN ACK", true, { FleetFormat.ack($0.medianAckMs) }),
        ("STAGED", true, { $0.staged.map { "\($0)" } ?? "–" }),
        ("TO RUNNING (MED/P95)", true, { FleetFormat.wait(median: $0.stagedToRunningMedianMs, p95: $0.stagedToRunningP95Ms) }),
        ("DEFERRED", true, { $0.downloadDeferrals.map { "\(FleetFormat.total($0))" } ?? "–" }),
        ("FROM MIRRORS", true, { FleetFormat.rate($0.mirrorShare) }),
        ("ROLLOUT", false, { FleetFormat.rollout($0.rollout) }),
    ]

    private static func table(_ versions: [VersionSummary]) -> String {
        let rows = [columns.map(\.header)] + versions.map { v in columns.map { $0.cell(v) } }
        let widths = columns.indices.map { i in rows.map { $0[i].count }.max() ?? 0 }
        return rows.map { row in
            columns.indices.map { i in
                let pad = String(repeating: " ", count: widths[i] - row[i].count)
                return columns[i].right ? pad + row[i] : row[i] + pad
            }.joined(separator: "  ").replacingOccurrences(of: " +$", with: "", options: .regularExpression) + "\n"
        }.joined()
    }

    /// The folded versions' figures, named `(N other versions)`.
    private static func folded(_ other: FoldedVersions) -> VersionSummary {
        var figures = other.figures
        figures.version = "(\(other.versions) other version\(other.versions == 1 ? "" : "s"))"
        return figures
    }

    /// A string of the summary as it may be printed.
    private static func clean(_ text: String) -> String { TerminalText.escaped(text) }

    private static func reasonLines(_ versions: [VersionSummary]) -> [String] {
        let kinds: [(String, KeyPath<VersionSummary, [String: Int]>)] = [
            ("rollbacks", \.rollbacks), ("blacklists", \.blacklists), ("web-process deaths", \.webProcessDeaths),
            ("download failures", \.downloadFailures), ("refusals", \.refusals), ("download deferrals", \.deferrals),
        ]
        var lines: [String] = []
        for v in versions {
            for (name, path) in kinds where FleetFormat.total(v[keyPath: path]) > 0 {
                lines.append("  \(clean(v.version))  \(name): \(clean(FleetFormat.reasons(v[keyPath: path])))\n")
            }
        }
        return lines
    }
}

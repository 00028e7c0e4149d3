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
    /// The text of `summary`, ending with a newline: every column with `.wide` (the
    /// default), else the columns of the highest priorities that fit the width, one line
    /// naming those left out, and the other lines wrapped to the width.
    package static func render(_ summary: FleetSummary, layout: TextLayout = .wide) -> String {
        // A cohort's figures (`--label`) say whose they are.
        let cohort = summary.labels.map { " · labels \(clean(LabelFilter.text($0)))" } ?? ""
        // On a narrow terminal the line breaks between its figures, not inside one.
        let names = "\(clean(summary.app)) · \(clean(summary.channel))\(cohort):"
        var out = TextWidth.wrap(
            words: names.split(separator: " ").map(String.init) + [
                "\(summary.devices) device\(summary.devices == 1 ? "" : "s"),", "\(summary.silentDevices) silent",
                "(window \(FleetFormat.duration(seconds: summary.windowSeconds))),", "as of \(FleetFormat.time(summary.generated))",
            ], layout)
        // The versions not listed (docs/fleet-reports.md#the-fleet-summary) as one last row;
        // the devices that ran no version yet are no version's row but a line of their own.
        let versions = summary.releases + (summary.other.map { [folded($0)] } ?? [])
        let waiting = summary.devicesWithoutVersion
        let waitingLine = waiting > 0 ? TextWidth.wrap("\(waiting) device\(waiting == 1 ? " has" : "s have") not run a version yet.", layout) : ""
        guard !versions.isEmpty else {
            return out + "\n" + (waiting > 0 ? waitingLine : "No reports yet.\n")
        }
        let table = table(versions).render(layout)
        out += "\n" + table.text
        if case .fit(let columns) = layout, let note = TextTable.note(leftOut: table.leftOut, columns: columns) {
            out += note + "\n"
        }
        out += waitingLine
        let reasons = reasonLines(versions)
        if !reasons.isEmpty {
            out += "\nBy reason (devices):\n" + reasons.map { TextWidth.wrap($0, layout) }.joined()
        }
        if !summary.silent.isEmpty {
            var title = "Silent devices (\(summary.silentDevices), longest silent first"
            title += summary.silent.count < summary.silentDevices ? ", first \(summary.silent.count)):" : "):"
            out += "\n" + TextWidth.wrap(title, layout)
            for device in summary.silent {
                let words = ["\(device.device) ", "last seen \(FleetFormat.time(device.lastSeen)) ", "running \(running(device.running))"]
                out += TextWidth.wrap(words: words, lead: "  ", layout)
            }
        }
        return out
    }

    /// The columns of the table, in the order printed: header, alignment (right for
    /// numbers), priority (1 first: what an operator reads first; the highest number is
    /// the first left out on a narrow terminal) and cell.
    static let columns: [(column: TextTable.Column, cell: @Sendable (VersionSummary) -> String)] = [
        (.init("VERSION", right: false, priority: 1), { clean($0.version) }),
        (.init("NOW", priority: 2), { "\($0.devicesNow)" }),
        (.init("INSTALLS", priority: 3), { "\($0.installs)" }),
        (.init("TRIALS", priority: 8), { "\($0.trials)" }),
        (.init("COMMITS", priority: 9), { "\($0.commits)" }),
        (.init("ROLLBACKS", priority: 5), { "\(FleetFormat.total($0.rollbacks))" }),
        (.init("FAILED", priority: 4), { FleetFormat.rate($0.failureRate) }),
        (.init("BLACKLISTS", priority: 10), { "\(FleetFormat.total($0.blacklists))" }),
        (.init("WEB DEATHS", priority: 11), { "\(FleetFormat.total($0.webProcessDeaths))" }),
        (.init("ERRORS/DEV-H", priority: 6), { FleetFormat.perHour($0.errorsPerDeviceHour) }),
        (.init("MEDIAN ACK", priority: 13), { FleetFormat.ack($0.medianAckMs) }),
        (.init("STAGED", priority: 12), { $0.staged.map { "\($0)" } ?? "–" }),
        (.init("TO RUNNING (MED/P95)", priority: 14), { FleetFormat.wait(median: $0.stagedToRunningMedianMs, p95: $0.stagedToRunningP95Ms) }),
        (.init("DEFERRED", priority: 15), { $0.downloadDeferrals.map { "\(FleetFormat.total($0))" } ?? "–" }),
        (.init("FROM MIRRORS", priority: 16), { FleetFormat.rate($0.mirrorShare) }),
        (.init("ROLLOUT", right: false, priority: 7), { FleetFormat.rollout($0.rollout) }),
    ]

    /// The headers of ``columns`` from the first priority to the last.
    package static var headersByPriority: [String] { columns.map(\.column).sorted { $0.priority < $1.priority }.map(\.header) }

    private static func table(_ versions: [VersionSummary]) -> TextTable {
        TextTable(columns: columns.map(\.column), rows: versions.map { v in columns.map { $0.cell(v) } })
    }

    /// What a silent device ran: a version, or `no version yet`.
    private static func running(_ version: String) -> String {
        version == FleetSummary.noVersion ? "no version yet" : clean(version)
    }

    /// The folded versions' figures, named `(N other versions)`.
    private static func folded(_ other: FoldedVersions) -> VersionSummary {
        var figures = other.figures
        figures.version = "(\(other.versions) other version\(other.versions == 1 ? "" : "s"))"
        return figures
    }

    /// A string of the summary as it may be printed.
    private static func clean(_ text: String) -> String { TerminalText.escaped(text) }

    /// A line per version and kind of count with reasons (no newline).
    private static func reasonLines(_ versions: [VersionSummary]) -> [String] {
        let kinds: [(String, KeyPath<VersionSummary, [String: Int]>)] = [
            ("rollbacks", \.rollbacks), ("blacklists", \.blacklists), ("web-process deaths", \.webProcessDeaths),
            ("download failures", \.downloadFailures), ("refusals", \.refusals), ("download deferrals", \.deferrals),
        ]
        var lines: [String] = []
        for v in versions {
            for (name, path) in kinds where FleetFormat.total(v[keyPath: path]) > 0 {
                lines.append("  \(clean(v.version))  \(name): \(clean(FleetFormat.reasons(v[keyPath: path])))")
            }
        }
        return lines
    }
}

import ArgumentParser
import ClientFoundation
import CommandSupport
import FleetCollector
import FleetPage
import FleetReports
import Foundation
import StrictJSON

/// `clientctl fleet devices`: the devices a collector knows by key, and where each stands.
struct FleetDevicesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List the devices a collector knows by their keys: accepted, pending or rejected.",
        discussion: """
            Asks GET /v1/devices with the read token. A line a device: its STATUS, DEVICE id \
            (fleet admit takes it, or the key), when it was LAST SEEN, its reports HELD apart \
            while it is not admitted, its LABELS (those its latest batch carried, admitted or \
            held; none from a collector before labels), the APP/CHANNEL of its first batch, \
            its KEY and when it was FIRST SEEN. Most recently heard from first; at most \
            --limit devices (1–1000).

            The table fits the terminal: COLUMNS, else the terminal's width when stdout is \
            one, else 100 columns. Columns that do not fit are left out from the end of that \
            list, and one line under the table names them; --wide (or -o wide) prints every \
            column whatever the width. --json (or -o json) prints the collector's JSON.

            --label KEY=VALUE (repeatable, at most 8) lists and counts only the devices whose \
            labels include every label given.

            Exit status: 69 the collector is unreachable or answers 5xx/429, 78 the token is \
            refused, 65 the answer is not a device list (or not of the --label cohort: a \
            collector before labels), 66 the token file is missing, 64 a bad --label.

            Examples:
              clientctl fleet devices --collector http://127.0.0.1:9400/ --token-file read.token
              clientctl fleet devices --collector http://127.0.0.1:9400/ --token-file read.token \\
                --status pending --json
              clientctl fleet devices --collector http://127.0.0.1:9400/ \\
                --token-file read.token --label store=12
            """
    )

    @Option(help: ArgumentHelp("The collector's base URL.", valueName: "url"))
    var collector: String

    @Option(name: .customLong("token-file"), help: ArgumentHelp("A file holding the collector's read token.", valueName: "file"))
    var tokenFile: String

    @Option(help: ArgumentHelp("Only devices with this status: accepted, pending or rejected.", valueName: "state"))
    var status: String?

    @Option(help: ArgumentHelp("The most devices listed (1–1000).", valueName: "n"))
    var limit = 100

    @Option(
        name: .customLong("label"),
        help: ArgumentHelp("Only devices whose labels include this one (repeatable, all must match, at most 8).", valueName: "key=value"))
    var labels: [String] = []

    @Flag(name: .long, help: "Print the collector's JSON on stdout instead of the table.")
    var json = false

    @OptionGroup var table: FleetTableOptions

    func validate() throws {
        try table.validate(json: json)
        if let status, DeviceStatus(rawValue: status) == nil {
            throw ValidationError("--status \(status): not accepted, pending or rejected")
        }
        guard (1...DeviceList.maxListed).contains(limit) else { throw ValidationError("--limit must be 1 to \(DeviceList.maxListed), not \(limit)") }
    }

    func run() async throws {
        try await runReportingErrors {
            let cohort = try FleetQuery.labelFilter(labels)
            let client = CollectorClient(collector: try FleetAdmission.url(collector), token: try FleetQuery.token(file: tokenFile))
            var query = [URLQueryItem(name: "limit", value: String(limit))]
            if let status { query.append(URLQueryItem(name: "status", value: status)) }
            query += FleetQuery.labelItems(cohort)
            let data = try await client.get("v1/devices", query)
            let list: DeviceList
            do {
                list = try CollectorClient.decoder().decode(DeviceList.self, from: data)
            } catch {
                throw CommandError(.rejected, "GET v1/devices: the answer is not a device list (\(error))")
            }
            try FleetQuery.check(cohort: list.labels, asked: cohort, url: try client.url("v1/devices", query))
            if table.json(json) {
                Console.out(data.last == UInt8(ascii: "\n") ? data : data + Data("\n".utf8))
            } else {
                Console.out(Data(Self.text(list, layout: table.layout()).utf8))
            }
        }
    }

    /// The text: a line with the counts (of the cohort, with `--label`), then the table, a
    /// row a device: every column with `.wide` (the default), else those of the highest
    /// priorities that fit the width and one line naming those left out. The LABELS column
    /// (`none` for a device without) is absent when the collector is from before labels.
    static func text(_ list: DeviceList, layout: TextLayout = .wide) -> String {
        let counts = ["accepted", "pending", "rejected"].map { "\(list.counts[$0] ?? 0) \($0)" }.joined(separator: ", ")
        let cohort = list.labels.map { " (labels \(TerminalText.escaped(LabelFilter.text($0))))" } ?? ""
        var out = TextWidth.wrap("admission: \(TerminalText.escaped(list.admission)); \(counts)\(cohort)", layout)
        guard !list.devices.isEmpty else { return out }
        let hasLabels = list.devices.contains { $0.labels != nil }
        let columns = deviceColumns.filter { hasLabels || $0.column.header != "LABELS" }
        let rows = list.devices.map { d in columns.map { TerminalText.escaped($0.cell(d)) } }
        let table = TextTable(columns: columns.map(\.column), rows: rows).render(layout)
        out += table.text
        if case .fit(let width) = layout, let note = TextTable.note(leftOut: table.leftOut, columns: width) { out += note + "\n" }
        return out
    }

    /// The columns of the table, in the order printed, each with its priority (1 first; the
    /// highest number is the first left out on a narrow terminal) and cell.
    static let deviceColumns: [(column: TextTable.Column, cell: @Sendable (DeviceEntry) -> String)] = [
        (.init("STATUS", right: false, priority: 1), { $0.status }),
        (.init("DEVICE", right: false, priority: 2), { $0.device.text }),
        (.init("KEY", right: false, priority: 7), { $0.key.hex }),
        (.init("APP/CHANNEL", right: false, priority: 6), { "\($0.app)/\($0.channel)" }),
        (.init("FIRST SEEN", right: false, priority: 8), { RFC3339.format($0.firstSeen) }),
        (.init("LAST SEEN", right: false, priority: 3), { RFC3339.format($0.lastSeen) }),
        (.init("HELD", priority: 4), { "\($0.held)" }),
        (.init("LABELS", right: false, priority: 5), { $0.labels.map { $0.isEmpty ? "none" : LabelFilter.text($0) } ?? "" }),
    ]
}

import ArgumentParser
import ClientFoundation
import CommandSupport
import FleetCollector
import FleetReports
import Foundation
import StrictJSON

/// `clientctl fleet devices`: the devices a collector knows by key, and where each stands.
struct FleetDevicesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List the devices a collector knows by their keys: accepted, pending or rejected.",
        discussion: """
            Asks GET /v1/devices with the read token. Each line: the status, the device id, \
            its key (what fleet admit takes), the app and channel of its first batch, when it \
            was first and last heard from, its reports held apart while it is not admitted, \
            and its labels (those its latest batch carried, admitted or held). Most recently \
            heard from first; at most --limit devices (1–1000).

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

    func validate() throws {
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
            if json {
                Console.out(data.last == UInt8(ascii: "\n") ? data : data + Data("\n".utf8))
            } else {
                Console.out(Data(Self.text(list).utf8))
            }
        }
    }

    /// The table: a header with the counts (of the cohort, with `--label`), then a line a
    /// device, its labels last (`labels none` without; nothing from a collector before labels).
    static func text(_ list: DeviceList) -> String {
        let counts = ["accepted", "pending", "rejected"].map { "\(list.counts[$0] ?? 0) \($0)" }.joined(separator: ", ")
        let cohort = list.labels.map { " (labels \(TerminalText.escaped(LabelFilter.text($0))))" } ?? ""
        var out = "admission: \(TerminalText.escaped(list.admission)); \(counts)\(cohort)\n"
        for d in list.devices {
            let labels = d.labels.map { ["labels " + ($0.isEmpty ? "none" : LabelFilter.text($0))] } ?? []
            out +=
                ([
                    d.status.padding(toLength: 8, withPad: " ", startingAt: 0), d.device.text, d.key.hex, "\(d.app)/\(d.channel)",
                    "first \(RFC3339.format(d.firstSeen))", "last \(RFC3339.format(d.lastSeen))", "held \(d.held)",
                ] + labels).map { TerminalText.escaped($0) }.joined(separator: "  ") + "\n"
        }
        return out
    }
}

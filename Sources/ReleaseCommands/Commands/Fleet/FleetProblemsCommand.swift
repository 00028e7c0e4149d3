import ArgumentParser
import ClientFoundation
import CommandSupport
import FleetPage
import FleetReports
import Foundation
import StrictJSON

/// `clientctl fleet problems`: what breaks, per version, as a collector counts it.
struct FleetProblemsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "problems",
        abstract: "Print what breaks per version: rollbacks, web process deaths, failed downloads, page errors and their messages.",
        discussion: """
            Asks GET /v1/problems with the read token (docs/fleet-reports.md#what-breaks). \
            Per version, newest first (at most --versions, 1–20): each problem KIND with its \
            REASON, the EVENTS within --window (reports, or for page-errors the problems they \
            count) and the DEVICES that sent them, most frequent first; then the messages \
            devices kept with their page errors, the most frequent first, each with the \
            reports that kept it.

            Messages are text from devices: printed with control and bidi characters escaped \
            (\\u{1b}), as every string from the collector. --json prints the collector's JSON \
            as it came, once it was read as a problem summary.

            Exit status: 69 the collector is unreachable or answers 5xx/429, 78 the token is \
            refused (401), 65 the answer is not a problem summary, 66 the token file is \
            missing, 64 the collector answers 400 or redirects (3xx).

            Examples:
              clientctl fleet problems --collector http://127.0.0.1:9400/ \\
                --token-file read.token --app com.example.notes --channel stable
              clientctl fleet problems --collector http://127.0.0.1:9400/ \\
                --token-file read.token --app com.example.notes --channel stable \\
                --window 6h --versions 3 --json
            """
    )

    @Option(help: ArgumentHelp("The collector's base URL.", valueName: "url"))
    var collector: String

    @Option(name: .customLong("token-file"), help: ArgumentHelp("A file holding the collector's read token.", valueName: "file"))
    var tokenFile: String

    @Option(help: ArgumentHelp("The app's identifier (the devices' config app).", valueName: "id"))
    var app: String

    @Option(help: ArgumentHelp("The channel's name.", valueName: "name"))
    var channel: String

    @Option(
        help: ArgumentHelp(
            "Count the reports dated within this long: seconds, or with s, m, h or d (60 s to 366 d; default: the collector's, 1 d).",
            valueName: "duration"))
    var window: FleetWindow?

    @Option(help: ArgumentHelp("The most versions listed, the newest with problems (1–20).", valueName: "n"))
    var versions = ProblemSummary.defaultVersions

    @Flag(name: .long, help: "Print the collector's JSON on stdout instead of the table.")
    var json = false

    func validate() throws {
        guard (1...ProblemSummary.maxVersions).contains(versions) else {
            throw ValidationError("--versions must be 1 to \(ProblemSummary.maxVersions), not \(versions)")
        }
    }

    func run() async throws {
        try await runReportingErrors {
            let client = CollectorClient(
                collector: try FleetAdmission.url(collector), token: try FleetQuery.token(file: tokenFile),
                maxAnswerBytes: ProblemSummary.maxBytes)
            var query = [URLQueryItem(name: "app", value: app), URLQueryItem(name: "channel", value: channel)]
            if let window { query.append(URLQueryItem(name: "window", value: String(window.seconds))) }
            query.append(URLQueryItem(name: "versions", value: String(versions)))
            let data = try await client.get("v1/problems", query)
            let answer: ProblemSummary
            do {
                answer = try ProblemSummary.decode(data)
            } catch let error as FleetReportsError {
                throw CommandError(.rejected, "GET v1/problems: the answer is not a problem summary (\(FleetQuery.oneLine(error.message)))")
            }
            if json {
                Console.out(data.last == UInt8(ascii: "\n") ? data : data + Data("\n".utf8))
            } else {
                Console.out(Data(Self.text(answer).utf8))
            }
        }
    }

    /// The text: a first line naming the app, channel and window, then a table a problem
    /// kind a row, and under it each version's messages. Every string from the collector
    /// has its control and bidi characters escaped.
    static func text(_ answer: ProblemSummary) -> String {
        func clean(_ s: String) -> String { TerminalText.escaped(s) }
        let w = answer.windowSeconds
        let unit = [(86_400, "d"), (3_600, "h"), (60, "m")].first { w % $0.0 == 0 } ?? (1, "s")
        let window = "\(w / unit.0) \(unit.1) before \(RFC3339.format(answer.generated))"
        var out = "\(clean(answer.app)) · \(clean(answer.channel)): problems within \(window)\n"
        let listed = answer.versions.filter { !$0.problems.isEmpty }
        guard !listed.isEmpty else { return out + "No problem reported.\n" }
        let columns: [TextTable.Column] = [
            .init("VERSION", right: false, priority: 1), .init("KIND", right: false, priority: 2),
            .init("REASON", right: false, priority: 3), .init("EVENTS", priority: 4), .init("DEVICES", priority: 5),
        ]
        var rows: [[String]] = []
        for v in listed {
            for p in v.problems {
                let row: [String] = [clean(v.version), clean(p.kind), clean(p.reason ?? "–"), String(p.count), String(p.devices)]
                rows.append(row)
            }
        }
        out += TextTable(columns: columns, rows: rows).render(.wide).text
        for v in listed {
            let messages = v.problems.flatMap { $0.messages ?? [] }
            guard !messages.isEmpty else { continue }
            out += "\nMessages of \(clean(v.version)) (reports that kept each):\n"
            let width = messages.map { String($0.count).count }.max() ?? 1
            for m in messages {
                let n = String(m.count)
                let pad = String(repeating: " ", count: width - n.count)
                out += "  \(pad)\(n)  \(clean(m.message))\n"
            }
        }
        return out
    }
}

import ArgumentParser
import ClientFoundation
import CommandSupport
import FleetPage
import Foundation

/// `clientctl fleet status`: a channel's fleet per version, as text, JSON or a page.
struct FleetStatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Print a channel's fleet per version: devices on it, trials, commits, rollbacks and why.",
        discussion: """
            Asks the collector for GET /v1/fleet with the read token as a bearer token, over \
            the transport devices use (HTTPS_PROXY, HTTP_PROXY, NO_PROXY and SSL_CERT_FILE \
            apply). Per version: devices on it now (last seen within --window), installs, \
            trials, commits, rollbacks and blacklists by reason, web-process deaths, the \
            median time from load to acknowledgement and the rollout step devices saw; then \
            the devices silent for longer than the window.

            --label KEY=VALUE (repeatable, at most 8) narrows every figure to one cohort: \
            the devices whose latest labels (those their latest batch carried, from their \
            config.json) include every label given; the first line names the cohort.

            The table fits the terminal: COLUMNS, else the terminal's width when stdout is \
            one, else 100 columns. Columns that do not fit are left out, the least read \
            first (FROM MIRRORS, DEFERRED, TO RUNNING, MEDIAN ACK, STAGED, WEB DEATHS, \
            BLACKLISTS, COMMITS, TRIALS), and one line under the table names them; VERSION, \
            NOW, INSTALLS, FAILED, ROLLBACKS, ERRORS/DEV-H and ROLLOUT come first. --wide (or \
            -o wide) prints every column whatever the width. Devices that have not run a \
            version yet (their reports name none) are one line under the table, not a row.

            --json (or -o json) prints the collector's JSON as it came (docs/reference/json-output.md). \
            --html FILE also writes the same figures as one self-contained page (inline SVG \
            charts, no script, nothing loaded from anywhere), replacing FILE atomically.

            No redirect is followed, so the read token goes to --collector and nowhere else: \
            a 3xx names its Location; give that URL instead.

            Exit status: 69 the collector is unreachable or answers 5xx/429, 78 the token is \
            refused (401), 65 the answer is not a fleet summary (or not of the --label \
            cohort: a collector before labels), 66 the token file is missing, 64 a bad \
            --label, or the collector answers 400 or redirects (3xx).

            Examples:
              clientctl fleet status --collector http://127.0.0.1:9400/ \\
                --token-file read.token --app com.example.notes --channel stable
              clientctl fleet status --collector https://reports.example.com/ \\
                --token-file read.token --app com.example.notes --channel stable \\
                --window 6h --html fleet.html
              clientctl fleet status --collector http://127.0.0.1:9400/ \\
                --token-file read.token --app com.example.notes --channel beta --json
              clientctl fleet status --collector http://127.0.0.1:9400/ \\
                --token-file read.token --app com.example.notes --channel stable \\
                --label store=12 --label ring=beta
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
            "A device is on a version now when it reported within this long: seconds, or with s, m, h or d "
                + "(60 s to 366 d; default: the collector's, 1 d).",
            valueName: "duration"))
    var window: FleetWindow?

    @Option(
        name: .customLong("label"),
        help: ArgumentHelp(
            "Only devices whose latest labels include this one (repeatable, all must match, at most 8).", valueName: "key=value"))
    var labels: [String] = []

    @Flag(name: .long, help: "Print the collector's JSON on stdout instead of the table.")
    var json = false

    @OptionGroup var table: FleetTableOptions

    @Option(help: ArgumentHelp("Also write the fleet page (self-contained HTML) to this file.", valueName: "file"))
    var html: String?

    func validate() throws { try table.validate(json: json) }

    func run() async throws {
        try await runReportingErrors {
            guard let url = URL(string: collector) else {
                throw CommandError(.invalidArgument, "--collector \(collector): not a URL")
            }
            let cohort = try FleetQuery.labelFilter(labels)
            let query = FleetQuery(
                collector: url, token: try FleetQuery.token(file: tokenFile), app: app, channel: channel, windowSeconds: window?.seconds,
                labels: cohort)
            let answer = try await query.fetch()
            if let html {
                do {
                    try AtomicFile.write(Data(FleetHTML.render(answer.summary).utf8), to: html)
                } catch let error as any ClientctlError {
                    throw CommandError(.io, "--html \(html): \(error.message)", underlying: error)
                }
            }
            if table.json(json) {
                let out = Self.escapingControls(answer.json)
                Console.out(out.last == UInt8(ascii: "\n") ? out : out + Data("\n".utf8))
            } else {
                Console.out(Data(FleetText.render(answer.summary, layout: table.layout()).utf8))
            }
        }
    }
}

extension FleetStatusCommand {
    /// The collector's JSON with every control or bidi character (`TerminalText.isControl`)
    /// but JSON's own whitespace written as a `\uXXXX` escape: the same JSON value, since
    /// in a document that parsed such a character can only stand inside a string, but
    /// nothing a terminal acts on.
    static func escapingControls(_ json: Data) -> Data {
        let text = String(decoding: json, as: UTF8.self)
        let whitespace: Set<Unicode.Scalar> = ["\t", "\n", "\r"]
        guard text.unicodeScalars.contains(where: { TerminalText.isControl($0) && !whitespace.contains($0) }) else { return json }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if TerminalText.isControl(scalar) && !whitespace.contains(scalar) {
                let hex = String(scalar.value, radix: 16)
                out.append(contentsOf: ("\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex).unicodeScalars)
            } else {
                out.append(scalar)
            }
        }
        return Data(String(out).utf8)
    }
}

/// `--window`: seconds, or a number with `s`, `m`, `h` or `d`; 60 s to 366 days (the
/// collector's range).
struct FleetWindow: ExpressibleByArgument, Sendable {
    var seconds: Int

    init?(argument: String) {
        let units: [Character: Int] = ["s": 1, "m": 60, "h": 3_600, "d": 86_400]
        var text = Substring(argument)
        var unit = 1
        if let last = text.last, let factor = units[last] {
            unit = factor
            text = text.dropLast()
        }
        guard let n = Int(text), n > 0, n <= 366 * 86_400 / unit, (60...(366 * 86_400)).contains(n * unit) else { return nil }
        seconds = n * unit
    }
}

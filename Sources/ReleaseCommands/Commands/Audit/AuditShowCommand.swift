import ArgumentParser
import AuditTrail
import ClientFoundation
import CommandSupport
import Foundation
import StrictJSON

/// `clientctl audit show FILE [--json]`: the trail's entries for people or scripts.
struct AuditShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Print the entries of an audit trail, oldest first.",
        discussion: """
            One line per entry: its number, time (UTC), operator and address, act and \
            target, the state before → after, and the result; then the count and the head \
            (the SHA-256 of the last line) to compare with a copy. Control characters in \
            the entries are shown as \\u{…} escapes. Nothing is verified: run `clientctl \
            audit verify` for that.

            --json prints an array of objects with seq, time, operator, address, act, \
            target, before, after and result.

            A line that is not a whole entry ends the listing: what comes before it is \
            printed, then the error, exit 65.

            Examples:
              clientctl audit show audit.jsonl
              clientctl audit show audit.jsonl --json | jq '.[] | select(.act == "halt")'
            """
    )

    @Argument(help: ArgumentHelp("The audit trail.", valueName: "FILE"))
    var file: String

    @OptionGroup var output: OutputOptions

    func run() async throws {
        try await runReportingErrors {
            let (entries, problem) = try AuditTrail.readUntilBroken(file)
            if output.json {
                let array = JSONValue.array(entries.map { .object(Self.jsonObject($0)) })
                Console.out(FleetStatusCommand.escapingControls(Data(JSONPrettyPrinter.render(array))))
            } else {
                var out = entries.map(Self.line).joined(separator: "\n")
                if !entries.isEmpty { out += "\n" }
                let head = entries.last?.lineHash ?? String(repeating: "0", count: 64)
                let count = "\(entries.count) \(entries.count == 1 ? "entry" : "entries")"
                out += "\(TerminalText.escaped(file)): \(count), head \(head) (not verified)\n"
                Console.out(Data(out.utf8))
            }
            if let problem { throw problem }
        }
    }

    /// The `--json` shape of one entry.
    static func jsonObject(_ entry: AuditEntry) -> JSONObject {
        let r = entry.record
        return [
            "seq": .integer(Int64(entry.seq)), "time": .string(RFC3339.format(r.time)), "operator": .string(r.operatorName),
            "address": .string(r.address), "act": .string(r.act), "target": .string(r.target), "before": .string(r.before),
            "after": .string(r.after), "result": .string(r.result),
        ]
    }

    /// `3  2027-01-15T08:00:00Z  ada from 192.0.2.7  halt stable 1.4.0  1.4.0 100% → 1.4.0 paused  ok`.
    static func line(_ entry: AuditEntry) -> String {
        let r = entry.record
        func text(_ s: String) -> String { TerminalText.escaped(s) }
        var parts = ["\(entry.seq)", RFC3339.format(r.time), "\(text(r.operatorName)) from \(text(r.address))", "\(text(r.act)) \(text(r.target))"]
        if !r.before.isEmpty || !r.after.isEmpty {
            parts.append(
                r.before == r.after
                    ? "\(text(r.before)) (unchanged)" : "\(text(r.before.isEmpty ? "-" : r.before)) → \(text(r.after.isEmpty ? "-" : r.after))")
        }
        parts.append(text(r.result))
        return parts.joined(separator: "  ")
    }
}

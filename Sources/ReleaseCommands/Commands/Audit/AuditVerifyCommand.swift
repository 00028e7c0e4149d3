import ArgumentParser
import AuditTrail
import ClientFoundation
import CommandSupport
import Foundation
import SignedManifest
import StrictJSON

/// `clientctl audit verify FILE --trust PUB.pem…`: the whole trail checked, or the first
/// entry that was tampered with.
struct AuditVerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check that an audit trail is whole, in order and signed by trusted keys.",
        discussion: """
            Checks every entry: a whole line, numbered from 1 in order, chained to the line \
            before by its SHA-256, signed by a --trust key. Prints `FILE: N entries intact, \
            head HASH` and exits 0, or names the first entry (its line, counted from 1) that \
            was changed, dropped, reordered, cut off or appended without a trusted key and \
            exits 65. A missing FILE exits 66.

            Entries cut off the end of the file leave an intact, shorter trail: compare the \
            count and head with a copy kept elsewhere (docs/audit-trail.md#what-verify-cannot-see).

            Examples:
              clientctl audit verify audit.jsonl --trust keys/rollout.pub.pem
              # entries the release key and an admin key signed too
              clientctl audit verify audit.jsonl --trust keys/rollout.pub.pem \\
                --trust keys/release.pub.pem --trust keys/admin-audit.pub.pem
            """
    )

    @Argument(help: ArgumentHelp("The audit trail.", valueName: "FILE"))
    var file: String

    @Option(name: .long, help: ArgumentHelp("A public key whose entries are trusted; repeat.", valueName: "PUB.pem"))
    var trust: [String] = []

    @OptionGroup var output: OutputOptions

    func validate() throws {
        guard !trust.isEmpty else { throw ValidationError("Missing expected argument '--trust <PUB.pem>'") }
    }

    func run() async throws {
        try await runReportingErrors {
            let keys = try trust.map { try Ed25519.PublicKey(pemFile: $0) }
            let result = try AuditTrail.verify(file, trust: keys)
            switch result {
            case .intact(let entries, let head):
                if output.json {
                    print(json(["file": .string(file), "intact": .bool(true), "entries": .integer(Int64(entries)), "head": .string(head)]))
                } else {
                    print("\(TerminalText.escaped(file)): \(entries) \(entries == 1 ? "entry" : "entries") intact, head \(head)")
                }
            case .broken(let entry, let reason):
                if output.json {
                    print(json(["file": .string(file), "intact": .bool(false), "entry": .integer(Int64(entry)), "reason": .string(reason)]))
                }
                throw CommandError(.rejected, "\(TerminalText.escaped(file)): entry \(entry) \(reason)")
            }
        }
    }

    private func json(_ object: JSONObject) -> String {
        String(decoding: FleetStatusCommand.escapingControls(Data(CanonicalJSON.serialize(object))), as: UTF8.self)
    }
}

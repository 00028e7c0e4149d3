import ArgumentParser
import ClientFoundation
import CommandSupport
import DeviceIdentity
import FleetReports
import Foundation

/// What `fleet admit`, `fleet reject` and `fleet forget` share: the collector, the admin
/// token and the devices named.
struct FleetAdmissionOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The collector's base URL.", valueName: "url"))
    var collector: String

    @Option(
        name: .customLong("token-file"),
        help: ArgumentHelp("A file holding the collector's admin token (its --admin-token-file).", valueName: "file"))
    var tokenFile: String

    @Flag(name: .long, help: "Print the collector's JSON answer on stdout.")
    var json = false

    @OptionGroup var audit: AuditKeyOptions
}

/// The request of one change, and its line.
enum FleetAdmission {
    /// The most names one command takes.
    static let maxNames = 1_000

    /// POSTs the change: the collector's answer, and what it says.
    private static func post(_ change: String, names: [String], options: FleetAdmissionOptions) async throws -> (Data, AdmissionChange) {
        let client = CollectorClient(collector: try url(options.collector), token: try FleetQuery.token(file: options.tokenFile))
        let body = try JSONSerialization.data(withJSONObject: ["devices": names], options: [.sortedKeys])
        let data = try await client.post("v1/devices/\(change)", json: body)
        guard let result = try? CollectorClient.decoder().decode(AdmissionChange.self, from: data) else {
            throw CommandError(.rejected, "POST v1/devices/\(change): the answer is not an admission change")
        }
        return (data, result)
    }

    /// `--collector` as a URL.
    static func url(_ text: String) throws -> URL {
        guard let url = URL(string: text) else { throw CommandError(.invalidArgument, "--collector \(text): not a URL") }
        return url
    }

    /// Checks names: keys (64 lowercase hex digits) or, with `ids`, device ids (32).
    static func validate(_ names: [String], lengths: Set<Int>, what: String) throws {
        guard (1...maxNames).contains(names.count) else { throw ValidationError("name 1 to \(maxNames) \(what)") }
        for name in names {
            let valid =
                (lengths.contains(DeviceID.hexDigits) && DeviceID.isValid(name))
                || (lengths.contains(DevicePublicKey.hexDigits) && DevicePublicKey.isValid(name))
            guard valid else {
                throw ValidationError("\(TerminalText.escaped(String(name.prefix(70)))): not \(what) (lowercase hex)")
            }
        }
    }

    /// POSTs the change and prints its line (or the JSON).
    static func run(_ change: String, names: [String], options: FleetAdmissionOptions) async throws {
        // With --audit, one entry per device named: an auditor looks a device up by its id.
        let recorder = try options.audit.trail.recorder(signer: try options.audit.signer())
        let data: Data
        let result: AdmissionChange
        do {
            (data, result) = try await post(change, names: names, options: options)
        } catch {
            for name in names { await recorder?.appendFailure(change, target: name, before: "", after: "", error: error) }
            throw error
        }
        let done = change == "forget" ? "forgotten" : change + "ed"
        for name in names {
            try await recorder?.appendDone(
                change, target: name, before: "", after: "\(done) (one of \(names.count) named; the collector changed \(result.devices))")
        }
        if options.json {
            Console.out(data.last == UInt8(ascii: "\n") ? data : data + Data("\n".utf8))
            return
        }
        let devices = "\(result.devices) device\(result.devices == 1 ? "" : "s")"
        switch change {
        case "admit": Console.out(Data("admitted \(devices) now; \(result.reports) held reports joined the fleet's\n".utf8))
        case "reject": Console.out(Data("rejected \(devices); \(result.reports) held reports deleted\n".utf8))
        default: Console.out(Data("forgot the keys of \(devices); \(result.reports) held reports deleted\n".utf8))
        }
    }
}

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
}

/// The request of one change, and its line.
enum FleetAdmission {
    /// The most names one command takes.
    static let maxNames = 1_000

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
        let client = CollectorClient(collector: try url(options.collector), token: try FleetQuery.token(file: options.tokenFile))
        let body = try JSONSerialization.data(withJSONObject: ["devices": names], options: [.sortedKeys])
        let data = try await client.post("v1/devices/\(change)", json: body)
        guard let result = try? CollectorClient.decoder().decode(AdmissionChange.self, from: data) else {
            throw CommandError(.rejected, "POST v1/devices/\(change): the answer is not an admission change")
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

/// `clientctl fleet admit KEY…`.
struct FleetAdmitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admit",
        abstract: "Admit devices by key or device id: their reports count, those held join the fleet's.",
        discussion: """
            POSTs /v1/devices/admit with the collector's admin token. A key not seen yet is \
            admitted ahead of its device (preauthorized): its first batch counts. A device's \
            key is in `clientctl status` on the device (device key) and in fleet devices.

            Exit status: 69 the collector is unreachable, 78 the admin token is refused or the \
            collector takes no admin requests, 64 a name that is not a key or device id.

            Examples:
              clientctl fleet admit --collector http://127.0.0.1:9400/ --token-file admin.token \\
                3f9a…64 hex digits…
              clientctl fleet admit --collector http://127.0.0.1:9400/ --token-file admin.token \\
                $(clientctl fleet devices --collector http://127.0.0.1:9400/ --token-file read.token \\
                    --status pending --json | jq -r '.devices[].key')
            """
    )

    @OptionGroup var options: FleetAdmissionOptions

    @Argument(help: ArgumentHelp("Device keys (64 hex digits) or device ids (32).", valueName: "key-or-id"))
    var names: [String] = []

    func validate() throws { try FleetAdmission.validate(names, lengths: [32, 64], what: "a device key (64 hex digits) or id (32)") }

    func run() async throws {
        try await runReportingErrors { try await FleetAdmission.run("admit", names: names, options: options) }
    }
}

/// `clientctl fleet reject KEY…`.
struct FleetRejectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reject",
        abstract: "Reject devices by key or device id: their batches are refused, those held deleted.",
        discussion: """
            POSTs /v1/devices/reject with the collector's admin token. What a rejected device \
            reported before stays; fleet admit takes it back.

            Examples:
              clientctl fleet reject --collector http://127.0.0.1:9400/ --token-file admin.token \\
                0f1e2d3c4b5a69788796a5b4c3d2e1f0
            """
    )

    @OptionGroup var options: FleetAdmissionOptions

    @Argument(help: ArgumentHelp("Device keys (64 hex digits) or device ids (32).", valueName: "key-or-id"))
    var names: [String] = []

    func validate() throws { try FleetAdmission.validate(names, lengths: [32, 64], what: "a device key (64 hex digits) or id (32)") }

    func run() async throws {
        try await runReportingErrors { try await FleetAdmission.run("reject", names: names, options: options) }
    }
}

/// `clientctl fleet forget DEVICE-ID…`.
struct FleetForgetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "forget",
        abstract: "Forget the keys of devices that lost theirs: each binds again at its next batch.",
        discussion: """
            POSTs /v1/devices/forget with the collector's admin token. A device whose root \
            lost device-key.pem makes a new key, which the collector refuses (409) while its id \
            is bound to the old one; forgetting the id lets its next batch bind the new key, \
            under the collector's admission (pending under manual). What it reported stays.

            Examples:
              clientctl fleet forget --collector http://127.0.0.1:9400/ --token-file admin.token \\
                0f1e2d3c4b5a69788796a5b4c3d2e1f0
            """
    )

    @OptionGroup var options: FleetAdmissionOptions

    @Argument(help: ArgumentHelp("Device ids (32 hex digits).", valueName: "device-id"))
    var names: [String] = []

    func validate() throws { try FleetAdmission.validate(names, lengths: [32], what: "a device id (32 hex digits)") }

    func run() async throws {
        try await runReportingErrors { try await FleetAdmission.run("forget", names: names, options: options) }
    }
}

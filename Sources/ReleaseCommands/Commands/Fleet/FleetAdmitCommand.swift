import ArgumentParser
import CommandSupport

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

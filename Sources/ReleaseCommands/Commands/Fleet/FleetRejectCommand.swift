import ArgumentParser
import CommandSupport

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

import ArgumentParser
import CommandSupport

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

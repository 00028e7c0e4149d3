import ArgumentParser
import ClientUpdater
import CommandSupport
import Foundation

/// `clientctl rollback`: back to the last known good version, blacklisting the current one.
struct RollbackCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rollback",
        abstract: "Roll back to the last known good version (else the embedded seed), blacklisting the current one.",
        discussion: """
            The blacklisted version is never selected or downloaded again. When the current \
            version is itself the last known good one, the device goes back to the embedded \
            seed. Prints the folder the web view should load on stdout.

            Refused (exit 75) while `clientctl serve` runs on the root: serve is then the \
            only writer of the watchdog.

            Examples:
              clientctl rollback --root /var/lib/notes
              clientctl rollback --root /var/lib/notes --json | jq .blacklist
            """
    )

    @OptionGroup var device: DeviceOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        try await runReportingErrors {
            let report = try await DeviceContext.open(device).updater.rollback()
            LifecycleOutput.print(report, json: output.json)
        }
    }
}

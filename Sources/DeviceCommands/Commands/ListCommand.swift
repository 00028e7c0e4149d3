import ArgumentParser
import ClientUpdater
import CommandSupport
import Foundation

/// `clientctl list`: the installed versions of a device root.
struct ListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List installed versions with their shell ranges and flags.",
        discussion: """
            Flags: current, pending, last-known-good, blacklisted, retry, incompatible.

            Examples:
              clientctl list --root /var/lib/notes
              clientctl list --root /var/lib/notes --json
            """
    )

    @OptionGroup var device: DeviceOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        try await runReportingErrors {
            let status = try await DeviceContext.open(device).updater.status()
            if output.json {
                try printJSON(status.installed)
            } else {
                print(StatusText.renderList(status))
            }
        }
    }
}

import ArgumentParser
import ClientUpdater
import CommandSupport
import Foundation

/// `clientctl status`: what a device root runs and remembers.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show current, pending and last-known-good versions, lists and the last check.",
        discussion: """
            Reads the root without locking it. `current` is `embedded` while the embedded \
            seed runs; `selected` is what the next fresh start would run.

            Examples:
              clientctl status --root /var/lib/notes
              clientctl status --root /var/lib/notes --json | jq .current
              clientctl status --root /var/lib/notes --explain
            """
    )

    @OptionGroup var device: DeviceOptions
    @OptionGroup var output: OutputOptions

    @Flag(
        help: ArgumentHelp(
            "Say why the device runs this version and not a newer one, one line per reason (with --json: \"explanation\")."))
    var explain = false

    func run() async throws {
        try await runReportingErrors {
            let updater = try DeviceContext.open(device).updater
            let status = explain ? try await updater.explainedStatus() : try await updater.status()
            if output.json {
                try printJSON(status)
            } else if explain {
                print((status.explanation ?? []).joined(separator: "\n"))
            } else {
                print(StatusText.render(status))
            }
        }
    }
}

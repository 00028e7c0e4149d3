import ArgumentParser
import ClientUpdater
import CommandSupport
import Foundation

/// `clientctl reload`: switch to the pending version (hosts that don't run `serve`).
struct ReloadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reload",
        abstract: "Switch to the pending version and print the serving folder to load.",
        discussion: """
            Makes the pending version current (its folder was organized when it was \
            staged, so this is a pointer flip) and starts its startup trial: the page must \
            report `clientctl ack` within the startup timeout, or the next clientctl \
            command on the root rolls it back. Prints the folder the web view should load \
            on stdout. Exits 66 when nothing is pending.

            Refused (exit 75) while `clientctl serve` runs on the root: serve is then the \
            only writer of the watchdog.

            Examples:
              dir=$(clientctl reload --root /var/lib/notes) \\
                  && webview --load "$dir/index.html"
              clientctl reload --root /var/lib/notes --json
            """
    )

    @OptionGroup var device: DeviceOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        try await runReportingErrors {
            let report = try await DeviceContext.open(device).updater.reload()
            LifecycleOutput.print(report, json: output.json)
        }
    }
}

import ArgumentParser
import ClientUpdater
import CommandSupport
import Foundation

/// `clientctl gc`: retention on demand.
struct GcCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gc",
        abstract: "Delete installed versions beyond the retention count (config `keep`, default 3).",
        discussion: """
            Keeps current, pending, last known good and the embedded seed always, then the \
            newest other versions up to `keep`; deletes the rest and their serving folders. \
            Also finishes deletions interrupted by a crash. Prints the removed versions.

            Refused (exit 75) while `clientctl serve` runs on the root: serve is then the \
            only writer of the watchdog.

            Examples:
              clientctl gc --root /var/lib/notes
              clientctl gc --root /var/lib/notes --json | jq .removed
            """
    )

    @OptionGroup var device: DeviceOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        try await runReportingErrors {
            let report = try await DeviceContext.open(device).updater.collectGarbage()
            if output.json {
                try printJSON(report)
            } else {
                for id in report.removed { print(id) }
                printError(report.removed.isEmpty ? "nothing to remove" : "removed \(report.removed.count) version(s)")
            }
        }
    }
}

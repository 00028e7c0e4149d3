import ArgumentParser
import ClientUpdater
import Foundation

/// `clientctl ack`: the page finished starting (hosts that don't run `serve`).
struct AckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ack",
        abstract: "Report startup complete: commit the version on trial as last known good.",
        discussion: """
            The equivalent of the page calling WebAppLocalServer.startupDidComplete().
            Commits the trial of the current version and runs retention. If the trial's
            startup timeout had already passed, the version is rolled back instead (retry
            list first, blacklist the second time), the folder to load is printed, and the
            command exits 65. With nothing on trial it changes nothing.

            Examples:
              clientctl ack --root /var/lib/notes
              clientctl ack --root /var/lib/notes --json
            """
    )

    @OptionGroup var device: DeviceOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        try await runReportingErrors {
            let report = try await DeviceContext.open(device).updater.startupDidComplete()
            LifecycleOutput.print(report, json: output.json, folder: false)
            if report.failed != nil {
                if !output.json, let dir = report.servingDirectory { print(dir) }
                throw ExitCode(ExitStatus.dataError.rawValue)
            }
        }
    }
}

import ArgumentParser
import ClientFoundation
import ClientUpdater
import CommandSupport
import Foundation

/// `clientctl ack`: the page finished starting (hosts that don't run `serve`).
struct AckCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ack",
        abstract: "Report startup complete: commit the version on trial as last known good.",
        discussion: """
            The equivalent of the page calling WebAppLocalServer.startupDidComplete(). \
            Commits the trial of the current version and runs retention. If the trial's \
            startup timeout had already passed, the version is rolled back instead (retry \
            list first, blacklist the second time), the folder to load is printed, and the \
            command exits 65. With nothing on trial it changes nothing.

            With --version V the acknowledgement names the version that started: when \
            another version is on trial it is refused (exit 65) and the trial goes on. \
            While `clientctl serve` runs on the root it is the only writer of the \
            watchdog: ack is refused (exit 75); the page acknowledges through serve.

            Examples:
              clientctl ack --root /var/lib/notes
              clientctl ack --root /var/lib/notes --version 1.4.0 --json
            """
    )

    @OptionGroup var device: DeviceOptions
    @OptionGroup var output: OutputOptions

    @Option(name: .customLong("version"), help: ArgumentHelp("The version that started; refused when another one is on trial.", valueName: "SEMVER"))
    var version: String?

    func run() async throws {
        try await runReportingErrors {
            let context = try DeviceContext.open(device)
            let outcome: Result<LifecycleReport, any Error>
            do {
                outcome = .success(try await context.updater.startupDidComplete(version: version))
            } catch {
                outcome = .failure(error)
            }
            // The commit or rollback just recorded, within a few seconds.
            await context.engine.deliverReportsBeforeExit()
            let report = try outcome.get()
            LifecycleOutput.print(report, json: output.json, folder: false)
            if report.failed != nil {
                if !output.json, let dir = report.servingDirectory { print(dir) }
                throw ExitCode(FailureKind.dataError.exitCode)
            }
        }
    }
}

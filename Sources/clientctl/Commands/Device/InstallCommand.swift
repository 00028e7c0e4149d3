import ArgumentParser
import ClientUpdater
import Foundation

/// `clientctl install`: one full update check on a device root.
struct InstallCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "install",
        abstract: "Check the feed once; download, verify and stage the newest compatible version.",
        discussion: """
            Fetches the manifest (conditional GET), verifies its signature before using any \
            field, downloads and hash-checks the archive, unpacks it safely into \
            clients/vX.Y.Z and stages it as pending (it runs after a reload or the next start).

            When the release carries a delta patch from a version this root holds, the \
            patch is downloaded instead of the archive; why a patch was not used is printed \
            on stderr, and the full archive installs (--no-delta: always the archive).

            For a Meteor root, performs a hot-code-push check against ROOT_URL instead.

            Exit status: 0 installed, up to date, or nothing compatible; 65 rejected input; \
            69 network failure after retries; 75 the root is locked by another clientctl \
            past --wait; 78 bad config.

            Examples:
              clientctl install --root /var/lib/notes
              CLIENTCTL_ROOT=/var/lib/notes clientctl install --json
              clientctl install --root /var/lib/notes --wait 0     # fail at once if busy
              clientctl install --root /var/lib/notes --ignore-rollout  # operator
              clientctl install --root /var/lib/notes --no-delta        # full archive
            """
    )

    @OptionGroup var device: DeviceOptions
    @OptionGroup var output: OutputOptions
    @Option(help: ArgumentHelp("Seconds to wait for another clientctl holding the root's lock (0–86400).", valueName: "SECONDS"))
    var wait = Seconds(30)
    @Flag(help: "Take the newest release even when its staged rollout has not reached this device or is paused.")
    var ignoreRollout = false
    @Flag(help: "Download the full archive even when a delta patch from an installed version applies.")
    var noDelta = false

    func validate() throws {
        try wait.require(in: 0...86_400, flag: "--wait", rule: "0 to 86400 seconds")
    }

    func run() async throws {
        try await runReportingErrors {
            let context = try DeviceContext.open(device, ignoreRollout: ignoreRollout, useDelta: !noDelta)
            let report: InstallReport
            // How a delta update went (patch used, or why the full archive) goes to stderr.
            let notes: InstallNotes.Handler = { printError("clientctl: " + $0) }
            if !output.json, let (bar, handler) = ProgressBar.handlerIfTerminal() {
                defer { bar.finish() }
                report = try await InstallNotes.withHandler(notes) {
                    try await DownloadProgress.withHandler(handler) {
                        try await context.updater.install(lockWait: wait.value)
                    }
                }
            } else {
                report = try await InstallNotes.withHandler(notes) {
                    try await context.updater.install(lockWait: wait.value)
                }
            }
            if output.json {
                try printJSON(report)
            } else {
                print(report.message)
            }
        }
    }
}

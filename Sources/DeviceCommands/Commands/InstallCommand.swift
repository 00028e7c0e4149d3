import ArgumentParser
import ClientUpdater
import CommandSupport
import Foundation
import SignedArchive

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

            --from DIR checks the offline media in DIR (a USB stick's mount point, written \
            by `clientctl export`) instead of the feed: every file this device reads is \
            copied into its root first and verified as an online release; the media is \
            never written to and nothing is sent to any network. Reports wait for the next \
            check that reaches the collector. Media without this device's app and channel \
            installs nothing (exit 0); media refused for its content exits 65 \
            (docs/offline-media.md).

            Exit status: 0 installed, up to date, or nothing compatible; 65 rejected input; \
            66 no --from folder; 69 network failure after retries; 75 the root is locked by another clientctl \
            past --wait; 78 bad config.

            Examples:
              clientctl install --root /var/lib/notes
              CLIENTCTL_ROOT=/var/lib/notes clientctl install --json
              clientctl install --root /var/lib/notes --wait 0     # fail at once if busy
              clientctl install --root /var/lib/notes --ignore-rollout  # operator
              clientctl install --root /var/lib/notes --no-delta        # full archive
              clientctl install --root /var/lib/notes --from /media/stick # no network
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
    @Option(help: ArgumentHelp("Install from the offline media in this folder (clientctl export) instead of the feed.", valueName: "DIR"))
    var from: String?

    func validate() throws {
        try wait.require(in: 0...86_400, flag: "--wait", rule: "0 to 86400 seconds")
    }

    func run() async throws {
        try await runReportingErrors {
            let context = try DeviceContext.open(device, ignoreRollout: ignoreRollout, useDelta: !noDelta, media: from)
            if from != nil, context.config.channelKind != .signedArchive {
                throw DeviceCommandError(.invalidArgument, "--from reads signed releases of offline media: \(context.layout.root) is a Meteor root")
            }
            // How a delta update went (patch used, or why the full archive) goes to stderr,
            // the progress bar too when stderr is a terminal: both from the updater's events.
            let events = context.updater.events(bufferingPolicy: .unbounded)
            let bar = output.json ? nil : ProgressBar.handlerIfTerminal()
            let printer = Task {
                for await event in events {
                    switch event {
                    case .installNote(let note): printError("clientctl: " + note)
                    case .downloadProgress(let version, let completed, let total): bar?.1(version, completed, total)
                    default: break
                    }
                }
                bar?.0.finish()
            }
            let result: Result<InstallReport, any Error>
            do {
                result = .success(try await context.updater.install(lockWait: wait.duration))
            } catch {
                result = .failure(error)
            }
            await context.updater.shutdown()  // ends the stream once its events are printed
            await printer.value
            // Pending fleet reports, this check's included, within a few seconds; from
            // offline media nothing is sent: they wait for a check that reaches the collector.
            if from == nil { await context.engine.deliverReportsBeforeExit() }
            let report = try result.get()
            if output.json {
                try printJSON(report)
            } else {
                print(report.message)
            }
        }
    }
}

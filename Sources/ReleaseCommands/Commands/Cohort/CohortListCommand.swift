import ArchivePublishing
import ArgumentParser
import CommandSupport
import Foundation
import SignedManifest

/// `clientctl cohort list CHANNEL --out RELEASES`.
struct CohortListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List a channel's cohorts and whether its release names each as it is now.",
        discussion: """
            One line per cohort: its name, how many device ids it lists, its SHA-256, and \
            whether the channel's current manifest names this list, another one, or none.

            Examples:
              clientctl cohort list stable --out releases
            """
    )

    @Argument(help: ArgumentHelp("The release channel, e.g. stable.", valueName: "CHANNEL"))
    var channel: String

    @Option(name: .long, help: ArgumentHelp("Release folder root (as given to publish --out).", valueName: "RELEASES"))
    var out: String

    func run() async throws {
        try await runReportingErrors {
            let cohorts = try ChannelCohorts.list(releases: out, channel: channel)
            let manifest = ChannelCohorts.currentManifest(out + "/" + channel)
            if cohorts.isEmpty { print("channel \(channel) has no cohorts") }
            for cohort in cohorts {
                let named = manifest?.cohort(named: cohort.name)
                let state =
                    named == nil
                    ? "not named by the current release"
                    : named == cohort ? "named by the current release" : "the current release names an older list"
                print("\(cohort.name): \(cohort.count) device\(cohort.count == 1 ? "" : "s"), sha256 \(cohort.digest); \(state)")
            }
        }
    }
}

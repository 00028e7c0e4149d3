import ArgumentParser

/// `clientctl fleet …`: what the devices of a channel report, as a collector sums it up.
struct FleetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet",
        abstract: "See what the devices of a channel report: versions, trials, rollbacks and why.",
        discussion: """
            Reads a report collector (`clientctl collect`) with its read token \
            (docs/fleet-reports.md#seeing-the-fleet).

            Examples:
              clientctl fleet status --collector http://127.0.0.1:9400/ \\
                --token-file read.token --app com.example.notes --channel stable
              clientctl fleet devices --collector http://127.0.0.1:9400/ --token-file read.token \\
                --status pending
              clientctl fleet admit --collector http://127.0.0.1:9400/ --token-file admin.token KEY
            """,
        subcommands: [
            FleetStatusCommand.self, FleetDevicesCommand.self, FleetAdmitCommand.self, FleetRejectCommand.self, FleetForgetCommand.self,
            FleetProblemsCommand.self,
        ]
    )
}

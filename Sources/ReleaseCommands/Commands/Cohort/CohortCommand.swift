import ArgumentParser

/// `clientctl cohort …`: the long device-id lists a target names (`id in cohort NAME`).
struct CohortCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cohort",
        abstract: "Write or list the device-id lists a release's target names.",
        discussion: """
            A cohort is a list of up to 100000 device ids that targets name with \
            `id in cohort NAME` (docs/targeting.md#cohorts). Its list lives in \
            OUT/CHANNEL/cohorts/; a manifest signed afterwards names it by its SHA-256, and a \
            device reads it only when its answer decides whether a release is for it.

            Examples:
              clientctl cohort set stable pilot --ids pilot-ids.txt \\
                --out releases --key k.pem
              clientctl cohort list stable --out releases
            """,
        subcommands: [CohortSetCommand.self, CohortListCommand.self]
    )
}

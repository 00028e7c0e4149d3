import ArgumentParser
import CommandSupport
import Foundation
import SignedManifest
import StrictJSON

/// `clientctl rollout set CHANNEL (--percent P | --steps …)`.
struct RolloutSetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set",
        abstract: "Start or change the staged rollout of the channel's release.",
        discussion: """
            --steps takes TIME:PERCENT pairs after --start (default now); TIME in seconds \
            or with s, m, h or d. --percent holds at once.

            Examples:
              clientctl rollout set stable --out releases --key k.pem --percent 10
              clientctl rollout set stable --out releases --key k.pem \\
                --steps 0:5,1d:25,2d:100 --start 2027-01-15T08:00:00Z
            """
    )

    @OptionGroup var edit: ChannelEditOptions

    @Option(name: .long, help: ArgumentHelp("Share of devices that take the release now (0–100).", valueName: "PERCENT"))
    var percent: RolloutArgument?

    @Option(name: .long, help: ArgumentHelp("A schedule: TIME:PERCENT pairs, e.g. 0:5,1d:25,2d:100.", valueName: "STEPS"))
    var steps: RolloutArgument?

    @Option(name: .long, help: ArgumentHelp("When the schedule starts (RFC 3339 UTC; default now).", valueName: "RFC3339"))
    var start: String?

    func validate() throws {
        guard (percent == nil) != (steps == nil) else { throw ValidationError("give either --percent or --steps") }
        if percent?.percent == nil, percent != nil { throw ValidationError("--percent takes one number from 0 to 100") }
        if let start, RFC3339.parse(start) == nil { throw ValidationError("--start \(start) is not an RFC 3339 UTC time") }
        if start != nil, steps == nil { throw ValidationError("--start goes with --steps") }
    }

    func run() async throws {
        try await runReportingErrors {
            let begin = start.flatMap(RFC3339.parse) ?? Date()
            guard let spec = percent ?? steps else { return }
            try await edit.apply(.setRollout(spec.rollout(start: begin)))
        }
    }
}

import ArgumentParser
import CommandSupport
import Foundation
import SignedManifest
import StrictJSON

/// `clientctl rollout set CHANNEL (--percent P | --steps … | --apply MODE …)`.
struct RolloutSetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set",
        abstract: "Start or change the staged rollout or the apply policy of the channel's release.",
        discussion: """
            --steps takes TIME:PERCENT pairs after --start (default now); TIME in seconds \
            or with s, m, h or d. --percent holds at once.

            --apply MODE (with --idle-seconds, --deadline, --grace as for publish) re-signs \
            the release with another apply policy: when devices that staged it switch to it \
            (docs/apply-policies.md). A --deadline duration counts from now.

            Examples:
              clientctl rollout set stable --out releases --key k.pem --percent 10
              clientctl rollout set stable --out releases --key k.pem \\
                --steps 0:5,1d:25,2d:100 --start 2027-01-15T08:00:00Z
              clientctl rollout set stable --out releases --key k.pem \\
                --apply idle --idle-seconds 300 --deadline 24h
            """
    )

    @OptionGroup var edit: ChannelEditOptions

    @Option(name: .long, help: ArgumentHelp("Share of devices that take the release now (0–100).", valueName: "PERCENT"))
    var percent: RolloutArgument?

    @Option(name: .long, help: ArgumentHelp("A schedule: TIME:PERCENT pairs, e.g. 0:5,1d:25,2d:100.", valueName: "STEPS"))
    var steps: RolloutArgument?

    @Option(name: .long, help: ArgumentHelp("When the schedule starts (RFC 3339 UTC; default now).", valueName: "RFC3339"))
    var start: String?

    @OptionGroup var applyPolicy: ApplyOptions

    func validate() throws {
        guard (percent == nil) != (steps == nil) || (percent == nil && steps == nil && applyPolicy.given) else {
            throw ValidationError("give either --percent or --steps (or --apply MODE)")
        }
        if percent?.percent == nil, percent != nil { throw ValidationError("--percent takes one number from 0 to 100") }
        if let start, RFC3339.parse(start) == nil { throw ValidationError("--start \(start) is not an RFC 3339 UTC time") }
        if start != nil, steps == nil { throw ValidationError("--start goes with --steps") }
    }

    func run() async throws {
        try await runReportingErrors {
            let now = Date()
            let begin = start.flatMap(RFC3339.parse) ?? now
            // Checked before anything is signed: a refused policy leaves the channel as it was.
            let policy = try applyPolicy.policy(releasedAt: Date(timeIntervalSince1970: floor(now.timeIntervalSince1970)))
            if let spec = percent ?? steps {
                try await edit.apply(.setRollout(spec.rollout(start: begin)))
            }
            if let policy {
                try await edit.setApply(policy)
            }
        }
    }
}

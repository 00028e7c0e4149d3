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

            --target EXPR re-signs the release for the devices the expression admits (their \
            labels and ids, docs/targeting.md); --every-device drops the target. \
            --alongside VERSION offers an older release of the channel to the devices this \
            one is not for, --alone stops that (docs/targeting.md#two-releases-at-once).

            Every re-signing (this, pause, pin, unpin, revoke, cohort set) lifts a halt the \
            channel's restriction.json holds the release in (`rollout guard`, `rollout \
            restrict`): it is refused, exit 77 and nothing signed, unless --lift-halt says so \
            (`rollout resume` and `rollout complete` lift it by themselves; `rollout pause` \
            needs the flag only when the halt revokes versions). A clock more than a year \
            after the channel's newest release is refused the same way without \
            --allow-far-future.

            Examples:
              clientctl rollout set stable --out releases --key k.pem --percent 10
              clientctl rollout set stable --out releases --key k.pem \\
                --steps 0:5,1d:25,2d:100 --start 2027-01-15T08:00:00Z
              clientctl rollout set stable --out releases --key k.pem \\
                --apply idle --idle-seconds 300 --deadline 24h
              # Only the devices of stores 12 and 14, half of them now
              clientctl rollout set stable --out releases --key k.pem \\
                --target 'store in (12, 14)' --percent 50
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

    @OptionGroup var target: TargetOption

    @Flag(name: .customLong("every-device"), help: "Drop the release's target: every device of the channel may take it.")
    var everyDevice = false

    @OptionGroup var placement: PlacementOptions

    @Flag(name: .long, help: "Offer no older release beside this one any more (drops --alongside).")
    var alone = false

    /// What changes besides the rollout: an apply policy, a target, the releases beside it.
    private var otherChange: Bool { applyPolicy.given || target.target != nil || everyDevice || !placement.alongside.isEmpty || alone }

    func validate() throws {
        guard (percent == nil) != (steps == nil) || (percent == nil && steps == nil && otherChange) else {
            throw ValidationError("give either --percent or --steps (or --apply MODE, --target EXPR, --every-device)")
        }
        if everyDevice, target.target != nil { throw ValidationError("--every-device and --target do not go together") }
        if alone, !placement.alongside.isEmpty { throw ValidationError("--alone and --alongside do not go together") }
        if placement.placesRollout, percent == nil, steps == nil { throw ValidationError("--draw and --draw-from go with --percent or --steps") }
        _ = try target.expression()
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
                try await edit.apply(.setRollout(try placement.placed(spec.rollout(start: begin))))
            }
            if !placement.alongside.isEmpty || alone {
                try await edit.apply(.setAlongside(placement.alongside))
            }
            if let policy {
                try await edit.setApply(policy)
            }
            if let expression = try target.expression() {
                try await edit.apply(.setTarget(expression))
            } else if everyDevice {
                try await edit.apply(.setTarget(nil))
            }
        }
    }
}

import ArchivePublishing
import ArgumentParser
import ClientFoundation
import CommandSupport
import Foundation
import SignedManifest
import StrictJSON

/// `clientctl rollout restrict CHANNEL`: the rollout role's signed restriction.
struct RolloutRestrictCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restrict",
        abstract: "Hold the channel's release back with the rollout role's key (never ships).",
        discussion: """
            Writes OUT/CHANNEL/restriction.json for the channel's current manifest, signed \
            by the trust root's rollout role: pause the rollout, cap its percent, revoke \
            versions up to the release's own. It cannot raise a percent, extend the \
            manifest's expiry or name anything to install, and devices refuse one that \
            tries. It holds until it expires (default 7d, never after the manifest) or a \
            new manifest (any release-role edit: rollout resume, publish) supersedes it. \
            Each restriction replaces the previous one. DURATION is seconds or a number \
            with s, m, h or d. Push it with `clientctl push` like the manifest.

            --apply MODE (with --idle-seconds, --deadline, --grace; a --deadline duration \
            counts from now) makes devices wait longer before they switch to the release \
            (docs/apply-policies.md): a more patient mode, a later or no deadline, a longer \
            grace. One that would hurry them (now, an earlier deadline, a deadline the \
            release has not) is refused (exit 64).

            --target EXPR narrows the devices the release is for: a device takes it only \
            where both this and the release's own target admit it (docs/targeting.md).

            Examples:
              clientctl rollout restrict stable --out releases --key rollout.pem --pause
              clientctl rollout restrict stable --out releases --key rollout.pem \\
                --percent 5 --expires-in 12h
              clientctl rollout restrict stable --out releases --key rollout.pem \\
                --pause --revoke 1.1.0
              # the release said --apply now: devices switch at their next start
              clientctl rollout restrict stable --out releases --key rollout.pem \\
                --apply next-start
              # only the lobby screens until the event is over
              clientctl rollout restrict stable --out releases --key rollout.pem \\
                --target 'site = lobby' --expires-in 2d
            """
    )

    @Argument(help: ArgumentHelp("The release channel, e.g. stable.", valueName: "CHANNEL"))
    var channel: String

    @Option(name: .long, help: ArgumentHelp("Release folder root (as given to publish --out).", valueName: "RELEASES"))
    var out: String

    @OptionGroup var signing: SigningOptions

    @Flag(name: .long, help: "No device takes the release while the restriction holds.")
    var pause = false

    @Option(name: .long, help: ArgumentHelp("Highest share of devices that may take the release (0–100).", valueName: "PERCENT"))
    var percent: Double?

    @Option(name: .long, help: ArgumentHelp("A version devices must leave (the release's own allowed); repeat.", valueName: "VERSION"))
    var revoke: [Version] = []

    @Option(
        name: .customLong("expires-in"), help: ArgumentHelp("How long it holds (default 7d, capped at the manifest's expiry).", valueName: "DURATION")
    )
    var expiresIn: String?

    @OptionGroup var applyPolicy: ApplyOptions

    @OptionGroup var target: TargetOption

    @OptionGroup var output: OutputOptions

    @OptionGroup var audit: AuditOptions

    func validate() throws {
        if let percent, !(percent.isFinite && (0...100).contains(percent)) {
            throw ValidationError("--percent takes a number from 0 to 100, not \(percent)")
        }
        if let expiresIn, (RolloutArgument.seconds(expiresIn) ?? 0) <= 0 {
            throw ValidationError("--expires-in \(expiresIn) is not a duration like 3600, 30m, 12h or 7d")
        }
        _ = try target.expression()
        guard pause || percent != nil || !revoke.isEmpty || applyPolicy.given || target.target != nil else {
            throw ValidationError("give --pause, --percent, --revoke, --apply or --target")
        }
    }

    func run() async throws {
        try await runReportingErrors {
            let now = Date(timeIntervalSince1970: floor(Date().timeIntervalSince1970))
            let lifetime = expiresIn.flatMap(RolloutArgument.seconds).map(TimeInterval.init)
            var request = RestrictionRequest(pause: pause, percent: percent, revoke: revoke, lifetime: lifetime)
            request.apply = try applyPolicy.policy(releasedAt: now)
            request.target = try target.expression()
            let signers = try signing.signers()
            let state = { ChannelAuditState(releases: out, channel: channel) }
            let r = try await audit.recording("rollout-restrict", target: state().target(channel), signer: signers[0], state: { state().text }) {
                try await ChannelRestrictor.restrict(request, releases: out, channel: channel, signers: signers, now: now)
            }
            if output.json {
                Console.out(Data(r.jsonBytes()))
                return
            }
            var held: [String] = []
            if r.paused { held.append("paused") }
            if let p = r.percent { held.append("at most \(FeedPercent.text(p)) %") }
            if !r.revoked.isEmpty { held.append("revoked: \(r.revoked.map(\.description).joined(separator: ", "))") }
            if let apply = r.apply { held.append("apply \(apply.summary)") }
            if let target = r.target { held.append("only where \(target)") }
            print("\(r.app) \(r.version) on \(r.channel): restricted (\(held.joined(separator: "; "))) until \(RFC3339.format(r.expires))")
        }
    }
}

import ApplyPolicy
import ArchivePublishing
import ArgumentParser
import ClientFoundation
import CommandSupport
import Foundation
import ReleaseSigning
import SignedManifest
import StrictJSON

/// What every command that re-signs a channel's current release takes.
struct ChannelEditOptions: ParsableArguments {
    @Argument(help: ArgumentHelp("The release channel, e.g. stable.", valueName: "CHANNEL"))
    var channel: String

    @Option(name: .long, help: ArgumentHelp("Release folder root (as given to publish --out).", valueName: "RELEASES"))
    var out: String

    @OptionGroup var signing: SigningOptions

    @Option(
        name: .long, help: ArgumentHelp("Expiry: RFC 3339 UTC time or Nd (default: 48 h after the rollout's last step).", valueName: "RFC3339|Nd"))
    var expires: Expiry?

    @OptionGroup var acts: EditFlagOptions

    @OptionGroup var output: OutputOptions

    @OptionGroup var audit: AuditOptions

    /// Applies `change` and prints what the channel offers now.
    func apply(_ change: ManifestChange, allowExpired: Bool = false) async throws {
        let now = Date()
        var flags = acts.flags
        flags.allowExpired = allowExpired
        let signers = try signing.signers()
        let m = try await audited(Self.act(change), signers) {
            try await ChannelEditor.apply(
                change, releases: out, channel: channel, signers: signers, now: now, expires: try expires?.date(now: now), flags: flags)
        }
        show(m, now: now)
    }

    /// Re-signs the release with another apply policy and prints what the channel offers now.
    func setApply(_ policy: ApplyPolicy) async throws {
        let now = Date()
        let signers = try signing.signers()
        let m = try await audited("rollout-set", signers) {
            try await ChannelEditor.setApply(
                policy, releases: out, channel: channel, signers: signers, now: now, expires: try expires?.date(now: now), flags: acts.flags)
        }
        show(m, now: now)
    }

    /// `body` recorded on `--audit`'s trail, signed by the first of `signers`.
    private func audited(_ act: String, _ signers: [any DocumentSigner], _ body: () async throws -> Manifest) async throws -> Manifest {
        guard audit.audit != nil, let signer = signers.first else { return try await body() }
        let target = ChannelAuditState(releases: out, channel: channel).target(channel)
        return try await audit.recording(
            act, target: target, signer: signer, state: { ChannelAuditState(releases: out, channel: channel).text }, body)
    }

    /// The audit trail's name of a re-signing.
    static func act(_ change: ManifestChange) -> String {
        switch change {
        case .setRollout, .setTarget, .setAlongside: return "rollout-set"
        case .pause: return "rollout-pause"
        case .resume: return "rollout-resume"
        case .complete: return "rollout-complete"
        case .revoke: return "revoke"
        case .pin: return "rollout-pin"
        case .unpin: return "rollout-unpin"
        case .refreshCohorts: return "cohort-set"
        }
    }

    private func show(_ m: Manifest, now: Date) {
        if output.json {
            Console.out(Data(m.jsonBytes()))
            return
        }
        var line = "\(m.app) \(m.version) on \(m.channel): "
        if let rollout = m.rollout {
            line += rollout.paused ? "rollout paused" : "rolling out, \(FeedPercent.text(rollout.percent(at: now))) % now"
        } else {
            line += "every device"
        }
        if let target = m.target { line += " of the target \(target)" }
        if !m.alongside.isEmpty { line += "; beside it: \(m.alongside.map(\.version.description).joined(separator: ", "))" }
        for pin in m.pins { line += "; pinned to \(pin.release.version): \(pin.target)" }
        for cohort in m.cohorts { line += "; cohort \(cohort.name): \(cohort.count) ids" }
        if !m.revoked.isEmpty { line += "; revoked: \(m.revoked.map(\.description).joined(separator: ", "))" }
        if let expires = m.expires { line += "; expires \(RFC3339.format(expires))" }
        if let apply = m.apply { line += "; apply \(apply.summary)" }
        print(line)
    }
}

/// The flags that allow an act every re-signing of a channel's release refuses without
/// them (docs/guides/releasing.md#acts-that-need-a-flag).
struct EditFlagOptions: ParsableArguments {
    @Flag(
        name: .customLong("lift-halt"),
        help: "Re-sign even though the channel's restriction.json halts the release: the re-signing lifts the halt.")
    var liftHalt = false

    @Flag(
        name: .customLong("allow-far-future"),
        help: "Re-sign even when this machine's clock reads more than a year after the channel's newest release.")
    var allowFarFuture = false

    var flags: EditFlags { EditFlags(liftHalt: liftHalt, allowFarFuture: allowFarFuture) }
}

/// Percent text for people: whole numbers without a fraction.
enum FeedPercent {
    static func text(_ percent: Double) -> String {
        percent == percent.rounded() ? String(Int(percent)) : String(format: "%.2f", percent)
    }
}

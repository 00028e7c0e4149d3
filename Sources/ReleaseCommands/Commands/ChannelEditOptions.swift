import ApplyPolicy
import ArchivePublishing
import ArgumentParser
import ClientFoundation
import CommandSupport
import Foundation
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

    @OptionGroup var output: OutputOptions

    /// Applies `change` and prints what the channel offers now.
    func apply(_ change: ManifestChange) async throws {
        let now = Date()
        let m = try await ChannelEditor.apply(
            change, releases: out, channel: channel, signers: try signing.signers(), now: now, expires: try expires?.date(now: now))
        show(m, now: now)
    }

    /// Re-signs the release with another apply policy and prints what the channel offers now.
    func setApply(_ policy: ApplyPolicy) async throws {
        let now = Date()
        let m = try await ChannelEditor.setApply(
            policy, releases: out, channel: channel, signers: try signing.signers(), now: now, expires: try expires?.date(now: now))
        show(m, now: now)
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

/// Percent text for people: whole numbers without a fraction.
enum FeedPercent {
    static func text(_ percent: Double) -> String {
        percent == percent.rounded() ? String(Int(percent)) : String(format: "%.2f", percent)
    }
}

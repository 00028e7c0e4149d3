import ClientFoundation
import Foundation
import SignedManifest
import StrictJSON

/// A channel's release and what holds it back, short, for an audit entry's `before` and
/// `after`: `1.4.0 25%`, `1.4.0 paused`, `1.4.0 100%, halted`, `1.4.0 100%, capped at 5%`.
/// Read from OUT/CHANNEL's manifest.json and restriction.json as they are (nothing
/// verified: the trail says what the files said).
struct ChannelAuditState {
    /// The release's version, nil without a readable manifest.
    let version: String?
    /// The short text.
    let text: String

    /// The state of `channel` in `releases` now.
    init(releases: String, channel: String, now: Date = Date()) {
        let folder = releases + "/" + channel
        guard
            let data = try? BoundedFile.read(folder + "/manifest.json", cap: StrictJSON.Limits.manifest.maxBytes, code: CommandError.Code.io)
        else {
            version = nil
            text = "no release"
            return
        }
        guard let object = try? StrictJSON.parseObject(data, limits: .manifest), case .success(let manifest) = Manifest.validate(object) else {
            version = nil
            text = "an unreadable manifest"
            return
        }
        version = manifest.version.description
        var parts = ["\(manifest.version) \(Self.offered(manifest, now: now))"]
        if let bytes = try? BoundedFile.read(folder + "/restriction.json", cap: 1 << 20, code: CommandError.Code.io),
            let restriction = try? Restriction.parse(bytes, source: "restriction.json"), restriction.restricts(manifest), restriction.expires > now
        {
            parts += Self.held(restriction)
        }
        text = parts.joined(separator: ", ")
    }

    /// `stable 1.4.0`, or the channel alone without a release.
    func target(_ channel: String) -> String {
        version.map { "\(channel) \($0)" } ?? channel
    }

    private static func offered(_ manifest: Manifest, now: Date) -> String {
        guard let rollout = manifest.rollout else { return "100%" }
        return rollout.paused ? "paused" : "\(FeedPercent.text(rollout.percent(at: now)))%"
    }

    private static func held(_ r: Restriction) -> [String] {
        var held: [String] = []
        if r.paused { held.append("halted") }
        if let percent = r.percent { held.append("capped at \(FeedPercent.text(percent))%") }
        if !r.revoked.isEmpty { held.append("revoked \(r.revoked.map(\.description).joined(separator: " "))") }
        if let target = r.target { held.append("only where \(target)") }
        if r.apply != nil { held.append("apply held back") }
        return held
    }
}

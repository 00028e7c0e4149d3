import ClientFoundation
import Foundation
import SignedManifest
import StrictJSON

/// What a signing of a channel's release refuses without the flag that names it
/// (docs/guides/releasing.md#acts-that-need-a-flag): an edit that would lift a halt
/// silently, and a `published` time far beyond the channel's newest.
enum ChannelEditGuards {
    /// How far beyond the channel's newest `published` a new one may be stamped without
    /// `--allow-far-future`: a year. A release machine whose clock reads 2099 would otherwise
    /// freeze the channel (every later release would be a replay to devices).
    static let farFuture: TimeInterval = 366 * 86_400

    /// The halt `folder/restriction.json` holds `current` in, as words (`pauses it`,
    /// `narrows it to 'not store = 12'`), when it binds this very manifest and has not
    /// expired at `now`; nil otherwise. Re-signing the manifest lifts it.
    static func halt(inFolder folder: String, of current: Manifest, now: Date) -> (restriction: Restriction, what: String)? {
        let path = folder + "/restriction.json"
        guard let data = FileManager.default.contents(atPath: path), let restriction = try? Restriction.parse(data, source: path),
            restriction.restricts(current), restriction.expires > now
        else { return nil }
        var parts: [String] = []
        if restriction.paused { parts.append("pauses it") }
        if let target = restriction.target { parts.append("narrows it to '\(target)'") }
        if let percent = restriction.percent { parts.append("caps it at \(FeedNumber.text(percent)) %") }
        if !restriction.revoked.isEmpty { parts.append("revokes \(restriction.revoked.map(\.description).joined(separator: ", "))") }
        if restriction.apply != nil { parts.append("holds its apply policy back") }
        return (restriction, parts.isEmpty ? "restricts it" : parts.joined(separator: ", "))
    }

    /// Refuses a re-signing of `current` that would lift the halt of `folder`'s restriction
    /// unless the operator names it (`lifting`).
    /// - Parameter act: what re-signs it, for the message (`cohort set`, `rollout set`).
    /// - Parameter pausing: the edit pauses the release, which holds back all a halt does
    ///   but its revocations: it needs the flag only when the halt revokes versions.
    static func requireNoHalt(inFolder folder: String, of current: Manifest, now: Date, lifting: Bool, pausing: Bool, act: String) throws {
        guard !lifting, let (restriction, what) = halt(inFolder: folder, of: current, now: now) else { return }
        if pausing, restriction.revoked.isEmpty { return }
        throw ArchivePublishingError(
            .needsFlag,
            "\(folder)/restriction.json \(what) (release \(current.version), until \(RFC3339.format(restriction.expires))): "
                + "\(act) re-signs the manifest and would lift that halt; give --lift-halt to lift it, nothing was changed")
    }

    /// Refuses to stamp `published` at `now` more than ``farFuture`` beyond `newest` (the
    /// channel's newest `published`) unless the operator names it (`allowed`).
    static func requirePlausible(_ now: Date, newest: Date?, channel: String, allowed: Bool) throws {
        guard !allowed, let newest, now.timeIntervalSince(newest) > farFuture else { return }
        let days = Int(now.timeIntervalSince(newest) / 86_400)
        throw ArchivePublishingError(
            .needsFlag,
            "this machine's clock reads \(RFC3339.format(now)), \(days) days after channel \(channel)'s newest release "
                + "(published \(RFC3339.format(newest))): a release stamped so far ahead makes every later one a replay to devices; "
                + "check the clock, or give --allow-far-future, nothing was changed")
    }

    /// Refuses to revoke a release a pin holds devices on: they would take no release at all.
    static func requireNoPinTo(_ revoked: [Version], in pins: [ReleasePin]) throws {
        guard let pin = pins.first(where: { revoked.contains($0.release.version) }) else { return }
        throw ArchivePublishingError(
            .unfollowablePin,
            "release \(pin.release.version) holds the devices of '\(pin.target)' by a pin: revoked, it would leave them on no release "
                + "at all; unpin them first (rollout unpin --target '\(pin.target)'), nothing was changed")
    }

    /// The `published` to stamp at `now`: the second after the channel's `newest` when that
    /// is at most a minute ahead (a re-signing in the same second stamps the next one, so a
    /// release published right after it must come later to be no replay), else `now`. A
    /// newest further ahead is a clock's error, which this does not carry on.
    static func stamp(_ now: Date, after newest: Date?) -> Date {
        guard let newest, newest >= now.addingTimeInterval(-1), newest.timeIntervalSince(now) <= 60 else { return now }
        return max(now, Date(timeIntervalSince1970: newest.timeIntervalSince1970.rounded(.down) + 1))
    }

    /// The newest `published` of a channel's `index.json` entries (nil: none).
    static func newestPublished(_ index: ReleaseIndex) -> Date? {
        index.releases.compactMap { $0["published"]?.stringValue.flatMap(RFC3339.parse) }.max()
    }
}

extension ChannelEditor {
    /// Refuses, before anything is written, an act that will re-sign `channel`'s release
    /// while its `restriction.json` halts it, unless `flags` lift the halt: `cohort set`
    /// asks first, so a refusal leaves the cohort's list as it was too. The re-signing
    /// checks again under the channel's lock.
    /// - Parameter cohort: the act re-signs only a release that names this cohort.
    package static func requireNoHalt(
        releases: String, channel: String, now: Date = Date(), flags: EditFlags, act: String, naming cohort: String? = nil
    ) throws {
        let folder = releases + "/" + channel
        guard !flags.liftHalt, let data = FileManager.default.contents(atPath: folder + "/manifest.json"),
            let object = try? StrictJSON.parseObject(data, limits: .manifest, source: folder + "/manifest.json"),
            let current = try? Manifest.validate(object).get()
        else { return }
        if let cohort, !current.cohorts.contains(where: { $0.name == cohort }) { return }
        try ChannelEditGuards.requireNoHalt(inFolder: folder, of: current, now: now, lifting: false, pausing: false, act: act)
    }
}

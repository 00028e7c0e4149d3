import ClientFoundation
import ClientUpdater
import Foundation
import SignedManifest

/// Which channel a device follows, where that channel's manifest is, and what the device
/// remembers of each channel it followed (docs/targeting.md#choosing-a-channel): the rules
/// of `clientctl channel set`, of the page's `setChannel` and of every check, without I/O.
///
/// A device follows its trust root's own channel (``ArchiveSettings/channel``) unless its
/// owner chose another that the root in force lists as `choosable`. A chosen channel's
/// manifests are verified exactly as the root's own: with the same root chain (walked
/// beside the root's own channel), for the app and for the channel followed, with every
/// fleet rule. The device keeps a floor and replay memory per channel, so a move never
/// lets a channel's older manifest or release in.
package enum ChannelChoice {
    /// The channel one check follows.
    package struct Following: Sendable, Equatable {
        /// The channel's name.
        package var channel: String
        /// Where its `manifest.json` is.
        package var manifestURL: String
        /// Why the device does not follow the channel its owner chose (the root in force no
        /// longer lets it); nil when it does, or chose none.
        package var note: String?

        package init(channel: String, manifestURL: String, note: String? = nil) {
            self.channel = channel
            self.manifestURL = manifestURL
            self.note = note
        }
    }

    /// The channel a device with `settings` follows under `root`: the chosen one when
    /// `root` lets the device choose it, else the root's own (with a note saying why, when
    /// one was chosen).
    /// - Throws: ``SignedArchiveError`` `.configInvalid` when no manifest URL can be made
    ///   for the chosen channel.
    package static func following(_ settings: ArchiveSettings, root: TrustRoot) throws -> Following {
        let home = Following(channel: settings.channel, manifestURL: settings.manifestURL)
        guard let chosen = settings.chosenChannel, chosen != settings.channel else { return home }
        guard root.allowsChannel(chosen) else {
            var fallback = home
            fallback.note =
                "channel '\(chosen)' was chosen, but \(rootName(root)) does not let this device choose it: it follows '\(settings.channel)'"
            return fallback
        }
        return Following(channel: chosen, manifestURL: try manifestURL(for: chosen, settings: settings))
    }

    /// Where channel `name`'s `manifest.json` is: the root's own channel's URL, the URL the
    /// operator gave for `name` (``ArchiveSettings/channelURLs``), else the sibling folder
    /// of the root's own channel, `../<name>/manifest.json` (a release folder's layout).
    /// - Throws: ``SignedArchiveError`` `.configInvalid` when the URL cannot be made.
    package static func manifestURL(for name: String, settings: ArchiveSettings) throws -> String {
        if name == settings.channel { return settings.manifestURL }
        if let mapped = settings.channelURLs?[name] { return mapped }
        guard let base = URL(string: settings.manifestURL),
            let sibling = URL(string: "../\(name)/manifest.json", relativeTo: base)?.absoluteURL
        else {
            throw SignedArchiveError(
                .configInvalid, "no manifest URL for channel '\(name)' can be made from '\(settings.manifestURL)': give one with --manifest-url")
        }
        return sibling.absoluteString
    }

    /// Why a manifest URL given for a channel cannot be used (not absolute, or refused by
    /// ``URLPolicy``), nil when it can.
    package static func manifestURLProblem(_ text: String, allowInsecureHTTP: Bool) -> String? {
        guard let url = URL(string: text), url.scheme != nil else { return "'\(text)' is not an absolute URL" }
        if case .refused(let why) = URLPolicy.check(url, manifestIsFile: url.isFileURL, allowInsecureHTTP: allowInsecureHTTP) { return why }
        return nil
    }

    /// Why a device whose trust root is `root` may not choose channel `name`, nil when it may.
    /// - Returns: ``SignedArchiveError`` `.invalidArgument` for a name off the channel-name
    ///   rule (exit 64), `.channelNotAllowed` for a channel the root does not list (exit 77).
    package static func refusal(_ name: String, root: TrustRoot) -> SignedArchiveError? {
        if let problem = ReleaseIdentifier.channel.problem(name) {
            return SignedArchiveError(.invalidArgument, "channel '\(TerminalText.escaped(name))': \(problem)")
        }
        guard !root.allowsChannel(name) else { return nil }
        if root.isImplicit {
            return SignedArchiveError(
                .channelNotAllowed,
                "channel '\(name)' is not allowed: this device trusts its --trust keys, not a signed root, and follows only '\(root.channel)'; "
                    + "a signed root that lists '\(name)' as choosable lets it choose")
        }
        return SignedArchiveError(
            .channelNotAllowed,
            "channel '\(name)' is not allowed by \(rootName(root)): this device may follow \(root.channels.map { "'\($0)'" }.joined(separator: ", "))"
        )
    }

    /// Makes `memory` the memory of `channel` (the channel a check follows now), when it is
    /// another channel's (nil: the root's own channel `home`): the floor and the newest
    /// `published` of the channel left are parked, those of `channel` come back (none the
    /// first time), and the ETags and the restriction's apply policy, which were the old
    /// channel's, go, so the first check of the channel reads its feed in full.
    /// - Returns: true when the device moved.
    @discardableResult
    package static func follow(_ channel: String, home: String, memory: inout ArchiveMemory) -> Bool {
        let left = memory.channel ?? home
        guard left != channel else { return false }
        var parked = memory.parked ?? [:]
        parked[left] = ArchiveMemory.ParkedChannel(highestAccepted: memory.highestAccepted, newestPublished: memory.newestPublished)
        let back = parked.removeValue(forKey: channel)
        var moved = ArchiveMemory(highestAccepted: back?.highestAccepted, newestPublished: back?.newestPublished)
        moved.channel = channel
        moved.revoked = memory.revoked  // the device's, whatever channel revoked them
        moved.parked = parked.isEmpty ? nil : parked
        memory = moved
        return true
    }

    /// The installed versions the seed rule may select: all of them on a device that never
    /// moved; on one that did, those at or below the floor of the channel it follows, so it
    /// runs that channel's release (a tester back from beta runs stable's 1.4.0 again, not
    /// beta's 1.5.0-rc.1). Nothing qualifies before the channel accepted a release: the
    /// device keeps what it runs until the channel's first check installs one.
    package static func selectable(_ installed: [InstalledVersion], memory: ArchiveMemory) -> [InstalledVersion] {
        guard memory.channel != nil else { return installed }
        guard let floor = memory.highestAccepted.flatMap(Version.init) else { return [] }
        return installed.filter { v in v.isEmbedded || Version(v.id).map { $0 <= floor } == true }
    }

    /// `root/N.json`, or the `--trust` keys.
    static func rootName(_ root: TrustRoot) -> String {
        root.isImplicit ? "the --trust keys (no signed root)" : "trust root \(root.version)"
    }
}

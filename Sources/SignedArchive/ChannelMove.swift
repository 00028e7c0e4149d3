import ClientFoundation
import ClientUpdater
import DeviceSetup
import Foundation
import SignedManifest

/// Reading and changing the channel a device follows: `clientctl channel show|set` and the
/// page's `WebAppLocalServer.getChannel|setChannel` (docs/targeting.md#choosing-a-channel).
/// A change takes the root's lock, checks the channel against the trust root the device
/// holds (``ChannelChoice/refusal(_:root:)``) and writes `config.json` atomically
/// (`DeviceConfig.edit`); a refused one writes nothing. A running agent follows the
/// channel from its next check.
package enum ChannelMove {
    /// What a device follows and may choose.
    package struct Choice: Codable, Sendable, Equatable {
        /// The channel the device follows (from its next check, when just chosen).
        package var channel: String
        /// The trust root's own channel, which the device follows unless another is chosen.
        package var rootChannel: String
        /// The channel chosen on the device (`config.json`'s `chosenChannel`); nil: none.
        package var chosen: String?
        /// Every channel the trust root lets the device follow, its own included, sorted.
        package var choosable: [String]
        /// The trust root's version (0: the `--trust` keys).
        package var trustRoot: Int
        /// Why the device does not follow the channel chosen; nil when it does.
        package var note: String?
    }

    /// The device's choice as `config.json` and its trust root say now.
    /// - Throws: ``SignedArchiveError`` `.configInvalid` for a Meteor root (it follows its
    ///   server and has no channels); what loading the config and the trust root throws.
    package static func read(_ layout: RootLayout) throws -> Choice {
        let config = try DeviceConfig.load(layout)
        let settings = try archiveSettings(config, layout: layout)
        return try choice(settings, root: try TrustStore(layout: layout, settings: settings, app: config.app).current())
    }

    /// Chooses channel `name` for the device: the trust root's own channel clears the
    /// choice. `manifestURL`, when given, is where that channel's manifest is (kept for it
    /// in `channelURLs`); by default the sibling folder of the root's own channel.
    /// - Returns: the choice before and after.
    /// - Throws: ``SignedArchiveError`` `.invalidArgument` (a name off the channel-name
    ///   rule, a URL the URL rules refuse), `.channelNotAllowed` (a channel the root does
    ///   not list), `.configInvalid` (a Meteor root); `UpdaterError` `.locked` when another
    ///   process holds the root's lock past `lockWait`. Nothing is written then.
    @discardableResult
    package static func set(_ name: String, manifestURL: String? = nil, layout: RootLayout, lockWait: Duration = .seconds(30)) async throws -> (
        before: Choice, after: Choice
    ) {
        let (before, after) = try await DeviceConfig.edit(layout, lockWait: lockWait) { config in
            var settings = try archiveSettings(config, layout: layout)
            let root = try TrustStore(layout: layout, settings: settings, app: config.app).current()
            if let refusal = ChannelChoice.refusal(name, root: root) { throw refusal }
            if let manifestURL {
                guard name != settings.channel else {
                    throw SignedArchiveError(
                        .invalidArgument,
                        "'\(name)' is the trust root's own channel: its manifest URL is the root's ('\(settings.manifestURL)'), not one of --manifest-url"
                    )
                }
                if let problem = ChannelChoice.manifestURLProblem(manifestURL, allowInsecureHTTP: config.allowInsecureHTTP) {
                    throw SignedArchiveError(.invalidArgument, "--manifest-url: \(problem)")
                }
                var urls = settings.channelURLs ?? [:]
                urls[name] = manifestURL
                settings.channelURLs = urls
            }
            settings.chosenChannel = name == settings.channel ? nil : name
            config.channelSettings = try ChannelSection(settings)
        }
        func read(_ config: DeviceConfig) throws -> Choice {
            let settings = try archiveSettings(config, layout: layout)
            return try choice(settings, root: try TrustStore(layout: layout, settings: settings, app: config.app).current())
        }
        return (try read(before), try read(after))
    }

    /// The choice of `settings` under `root`.
    static func choice(_ settings: ArchiveSettings, root: TrustRoot) throws -> Choice {
        let following = try ChannelChoice.following(settings, root: root)
        return Choice(
            channel: following.channel, rootChannel: settings.channel, chosen: settings.chosenChannel, choosable: root.channels,
            trustRoot: root.version, note: following.note)
    }

    private static func archiveSettings(_ config: DeviceConfig, layout: RootLayout) throws -> ArchiveSettings {
        guard config.channelKind == .signedArchive else {
            throw SignedArchiveError(
                .configInvalid, "\(layout.root) is a \(config.channelKind.rawValue) root: it follows its server and has no channels to choose")
        }
        return try config.settings(ArchiveSettings.self, layout: layout)
    }
}

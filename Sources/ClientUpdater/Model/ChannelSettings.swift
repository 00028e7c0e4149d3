import ClientFoundation
import DeviceSetup
import Foundation

/// A channel's own keys of `config.json` (its feed URL, trusted keys, …), read and
/// validated by the channel: the core keeps them as an opaque ``ChannelSection``.
package protocol ChannelSettings: Codable, Sendable, Equatable {
    /// The first value that breaks one of the channel's rules, as `name: why`; nil when
    /// the settings are usable. `config` gives the core values the rules depend on
    /// (`allowInsecureHTTP`).
    func problem(in config: DeviceConfig) -> String?
}

extension DeviceConfig {
    /// The channel's settings of this config, validated.
    /// - Throws: ``UpdaterError`` `.configInvalid` (exit 78) naming `layout.config` and
    ///   the broken rule, as for the core's own values.
    package func settings<Settings: ChannelSettings>(_ type: Settings.Type, layout: RootLayout) throws -> Settings {
        let settings: Settings
        do {
            settings = try channelSettings.decode(Settings.self)
        } catch {
            throw UpdaterError(.configInvalid, "\(layout.config) is not a valid \(channelKind.rawValue) config: \(error)")
        }
        if let problem = settings.problem(in: self) { throw UpdaterError(.configInvalid, "\(layout.config): \(problem)") }
        return settings
    }

    /// A config of `channelKind` whose channel section is `settings`.
    /// - Throws: ``UpdaterError`` `.invalidArgument` when the settings break a rule.
    package init<Settings: ChannelSettings>(
        app: String, channelKind: ChannelKind, settings: Settings, shellVersion: Version, embeddedPath: String? = nil,
        deviceSettings: DeviceSettings = DeviceSettings(), allowInsecureHTTP: Bool = false, limits: Limits = Limits(),
        proxy: String? = nil, caFile: String? = nil
    ) throws {
        let section: ChannelSection
        do {
            section = try ChannelSection(settings)
        } catch {
            throw UpdaterError(.invalidArgument, "the channel's settings cannot be stored: \(error)")
        }
        self.init(
            app: app, channelKind: channelKind, channelSettings: section, shellVersion: shellVersion,
            embeddedPath: embeddedPath, deviceSettings: deviceSettings,
            allowInsecureHTTP: allowInsecureHTTP, limits: limits, proxy: proxy, caFile: caFile)
        if let problem = settings.problem(in: self) { throw UpdaterError(.invalidArgument, problem) }
    }
}

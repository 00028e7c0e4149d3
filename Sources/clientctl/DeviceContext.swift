import ClientUpdater
import Foundation
import MeteorHotCodePush
import SignedArchive

/// What every device command works with: the root, its config, its channel and the
/// updater that sequences them. Built once per command from `--root`.
struct DeviceContext {
    let layout: RootLayout
    let config: DeviceConfig
    let channel: any UpdateChannel
    let updater: Updater

    /// - Parameters:
    ///   - ignoreRollout: `install --ignore-rollout` (archive roots).
    ///   - useDelta: false for `install --no-delta` (archive roots).
    static func open(_ options: DeviceOptions, ignoreRollout: Bool = false, useDelta: Bool = true) throws -> DeviceContext {
        let layout = try options.layout()
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: layout.root, isDirectory: &isDir), isDir.boolValue else {
            throw UpdaterError(.configInvalid, "device root \(layout.root) does not exist: run `clientctl init --root \(layout.root) …` first")
        }
        let config = try DeviceConfig.load(layout)
        let channel = try ChannelFactory.make(config: config, layout: layout, ignoreRollout: ignoreRollout, useDelta: useDelta)
        return DeviceContext(
            layout: layout, config: config, channel: channel,
            updater: Updater(layout: layout, config: config, channel: channel))
    }
}

/// Builds the channel a root's config names.
enum ChannelFactory {
    static func make(config: DeviceConfig, layout: RootLayout, ignoreRollout: Bool = false, useDelta: Bool = true) throws -> any UpdateChannel {
        switch config.channelKind {
        case .signedArchive:
            var channel = try ArchiveChannel(layout: layout, config: config)
            channel.ignoreRollout = ignoreRollout
            channel.useDelta = useDelta
            return channel
        case .meteor:
            return try MeteorChannel.forRoot(layout, config: config)
        default:
            throw UpdaterError(.configInvalid, "\(layout.config): channelKind '\(config.channelKind.rawValue)' is not signed-archive or meteor")
        }
    }
}

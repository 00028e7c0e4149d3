import ClientEngine
import ClientUpdater
import DeviceSetup
import Foundation
import Logging

/// What every device command works with: the root, its config, its channel and the
/// updater that sequences them, opened through the engine's one entry point
/// (``DeviceEngine/open(_:options:)``) from `--root`.
struct DeviceContext {
    let engine: DeviceEngine
    var layout: RootLayout { engine.layout }
    var config: DeviceConfig { engine.config }
    var channel: any UpdateChannel { engine.channel }
    var updater: Updater { engine.updater }

    /// - Parameters:
    ///   - ignoreRollout: `install --ignore-rollout` (archive roots).
    ///   - useDelta: false for `install --no-delta` (archive roots).
    ///   - startupTimeout: `serve --startup-timeout`.
    ///   - media: `install --from DIR` (archive roots): check the offline media in DIR.
    static func open(
        _ options: DeviceOptions, ignoreRollout: Bool = false, useDelta: Bool = true, startupTimeout: Duration? = nil, media: String? = nil
    ) throws -> DeviceContext {
        var engineOptions = DeviceEngine.Options(
            startupTimeout: startupTimeout, ignoreRollout: ignoreRollout, useDelta: useDelta, logger: engineLogger())
        engineOptions.media = media
        let engine = try DeviceEngine.open(try options.layout(), options: engineOptions)
        return DeviceContext(engine: engine)
    }

    /// The engine's log on stderr (``EngineLogging/engineLogger(environment:)``).
    static func engineLogger() -> Logger { EngineLogging.engineLogger() }
}

import ClientFoundation
import ClientUpdater
import ClientUpdaterHTTP
import DeviceSetup
import Foundation
import SignedArchive
import SignedManifest
import StrictJSON

/// A device root, a release folder and a loopback server hosting it, for archive-channel tests.
public final class DeviceFixture: @unchecked Sendable {
    // @unchecked: owned by one test at a time.
    public let tmp: TemporaryDirectory
    public let releases: ReleaseFolder
    public let faults = LoopbackFaults()
    public let server: LoopbackHTTPServer
    public let layout: RootLayout
    public var config: DeviceConfig

    public init(shell: String = "1.0.0", app: String = "com.example.notes", channel: String = "stable") throws {
        tmp = try TemporaryDirectory("device")
        releases = try ReleaseFolder(path: tmp("releases"), app: app, channel: channel, key: try ReleaseFolder.testKey())
        server = try LoopbackHTTPServer(handler: faults.wrap(LoopbackHTTPServer.folder(tmp("releases"))))
        layout = RootLayout(root: tmp("device"))
        config = try DeviceConfig(
            app: app, channelKind: .signedArchive,
            settings: ArchiveSettings(
                channel: channel, manifestURL: server.url("/\(channel)/manifest.json").absoluteString,
                trustedKeys: [try ReleaseFolder.testPublicKeyPEM()]),
            shellVersion: Version(shell) ?? Version(1, 0, 0),
            // Commands of one test may queue behind other tests' children on a loaded
            // machine: no trial times out between `reload` and `ack` unless a test says so.
            deviceSettings: DeviceSettings(startupTimeoutSeconds: 120))
        try RootInitializer.writeUnlessLocked(config, to: layout, force: false, store: layout.clients)
    }

    deinit { server.stop() }

    /// An updater over the production transport (direct: the loopback server is never
    /// reached through the environment's proxy), with retries that do not sleep.
    public func updater(now: @escaping @Sendable () -> Date = { Date() }) throws -> Updater {
        let downloader = Downloader(
            transport: DefaultTransport(settings: HTTPTransportSettings()), retry: RetryPolicy(maxAttempts: 3, initialDelay: .zero, maxDelay: .zero),
            idleTimeout: .seconds(5))
        let channel = try ArchiveChannel(layout: layout, config: config, downloader: downloader, now: now, logger: .quiet)
        return Updater(layout: layout, config: config, channel: channel, now: now, logger: .quiet)
    }

    /// Publishes a small client as `version` and returns its manifest object.
    @discardableResult
    public func publish(
        _ version: String, minShell: String = "1.0.0", maxShell: String? = nil, makeCurrent: Bool = true,
        edit: ((inout JSONObject) -> Void)? = nil
    ) throws -> JSONObject {
        let client = try ReleaseFolder.makeClient(at: tmp("src-\(version)-\(UUID().uuidString)"), version: version)
        return try releases.publish(
            version, archive: try ReleaseFolder.tarGz(of: client), minShell: minShell,
            maxShell: maxShell, makeCurrent: makeCurrent, edit: edit)
    }

    /// Publishes, installs, switches to and acknowledges each of `versions` in turn: the
    /// device ends on the last, committed, with the earlier ones installed.
    public func installAndCommit(_ versions: [String]) async throws {
        for version in versions {
            try publish(version)
            _ = try await updater().install()
            let updater = try updater()
            try await updater.reload()
            try await updater.startupDidComplete()
        }
    }

    /// The root as it is now (for "left exactly as it was" assertions).
    public func snapshot() throws -> TreeSnapshot { try TreeSnapshot(layout.root) }

    /// Requests the server saw for `path`.
    public func requests(to path: String) -> [LoopbackRequest] { server.requests.filter { $0.path == path } }
}

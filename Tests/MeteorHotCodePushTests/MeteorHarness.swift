import ClientFoundation
import ClientUpdater
import ClientUpdaterHTTP
import DeviceSetup
import Foundation
import MeteorHotCodePush
import Synchronization
import TestSupport
import Testing

/// A device root fed by a ``MeteorMockServer``, initialised as `clientctl init
/// --meteor-url` does and driven through the real ``Updater`` as the one-shot commands
/// drive it: `install` (check + stage pending), `reload` (switch, trial), `ack`
/// (startupDidComplete: commit, retention) and a fresh ``Updater/start`` for "what the
/// next process start runs". The Meteor channel underneath is the production one.
final class MeteorHarness: @unchecked Sendable {
    // @unchecked: used by one test task at a time.
    let temp: TemporaryDirectory
    let layout: RootLayout
    let server: MeteorMockServer
    let transport: MeteorMockTransport
    let embeddedPath: String
    /// The config `init` wrote (retention's N and the trial timeout are set per operation).
    let config: DeviceConfig
    var retry = RetryPolicy(maxAttempts: 4, initialDelay: .milliseconds(1), maxDelay: .milliseconds(2))
    /// Downloads in flight at once (1 makes the order of downloads the manifest's).
    var maxConnections = 3
    /// Retention's N for the next operations.
    var keep = 1
    /// Set when the mock runs over real HTTP on 127.0.0.1.
    let http: LoopbackHTTPServer?
    /// The paths the channel asked for over HTTP since the last ``check(serving:)``,
    /// recorded at the client: a request a refused check had already sent may reach the
    /// server after that check ended, so the server's log cannot tell checks apart.
    var askedPathSet: Set<String> { asked.paths }
    private let asked = PathRecordingTransport.Log()

    /// - Parameters:
    ///   - embedded: the embedded bundle folder (read-only).
    ///   - versions: the folder of downloadable versions the mock serves from.
    ///   - overHTTP: serve the mock on a ``LoopbackHTTPServer`` and download with the
    ///     production ``DefaultTransport`` (default); otherwise hand requests to the mock
    ///     in-process (for scripted connection failures).
    ///   - style: the plugin's test mock, or a server following webapp_server.js.
    init(embedded: String, versions: String, overHTTP: Bool = true, style: MeteorMockServer.Style = .pluginMock) throws {
        temp = try TemporaryDirectory("meteor")
        layout = RootLayout(root: temp.path + "/root")
        server = MeteorMockServer(versionsDirectory: versions, style: style)
        transport = MeteorMockTransport(server: server)
        http = overHTTP ? try LoopbackHTTPServer(handler: server.loopbackHandler()) : nil
        embeddedPath = embedded
        let rootURL = http?.baseURL.absoluteString ?? "http://127.0.0.1:3000/"
        let (config, state) = try MeteorRootSetup.make(
            .init(
                meteorURL: rootURL, embedded: embedded, compatPlatform: "ios", shellVersion: "1.0.0",
                deviceSettings: DeviceSettings(startupTimeoutSeconds: 600, keep: 1), allowInsecureHTTP: false))
        try RootInitializer.writeUnlessLocked(config, to: layout, force: false, store: layout.meteor)
        try StateStore.save(state, layout)
        self.config = config
    }

    deinit { http?.stop() }

    /// The reference fixtures' embedded bundle and downloadable versions
    /// (`CLIENTCTL_METEOR_REFERENCE`; throws when it is unset or wrong).
    static func reference() throws -> MeteorHarness {
        let dir = try MeteorFixtures.reference()
        return try MeteorHarness(embedded: dir + "/bundled_www/application", versions: dir + "/downloadable_versions")
    }

    /// Generated fixtures of `shape` (in the harness's temp folder) served like a real
    /// Meteor server (webapp_server.js). The legacy shape is served without ETags, so its
    /// assets are accepted by their content SHA-1 alone.
    static func generated(_ shape: MeteorShape) throws -> (MeteorHarness, MeteorScenarioFixtures) {
        let folder = try TemporaryDirectory("meteor-fixtures-\(shape)")
        let fixtures = try MeteorScenarioFixtures.write(shape, to: folder.path)
        let h = try MeteorHarness(embedded: fixtures.embedded, versions: fixtures.versions, style: .webapp)
        h.keepAlive.append(folder)
        if shape == .legacy { h.server.sendETags(false) }
        return (h, fixtures)
    }

    /// Objects that must live as long as the harness (generated fixture folders).
    var keepAlive: [AnyObject] = []

    /// The root's `state.json`.
    var state: DeviceState { StateStore.load(layout) }

    /// Changes the root's `state.json` (a failed write fails the test).
    func updateState(_ change: (inout DeviceState) -> Void) throws {
        var s = StateStore.load(layout)
        change(&s)
        try StateStore.save(s, layout)
    }

    /// The production channel over the harness's transport and options.
    var channel: MeteorChannel {
        let options = MeteorChannel.Options(maxConnections: maxConnections, retry: retry, logger: .quiet)
        if let http {  // direct: the loopback server is never reached through the environment's proxy
            return MeteorChannel(
                layout: layout, rootURL: http.baseURL, platform: .ios, embeddedPath: embeddedPath,
                transport: PathRecordingTransport(asked), options: options)
        }
        return MeteorChannel(
            layout: layout, rootURL: URL(string: "http://127.0.0.1:3000/") ?? URL(fileURLWithPath: "/"), platform: .ios,
            embeddedPath: embeddedPath, transport: transport, options: options)
    }

    /// The outcome of the channel's last check, as the updater got it.
    private let outcomes = RecordingChannel.Outcomes()

    /// A fresh updater over the root, as each `clientctl` command makes one; `progress`
    /// hears the download progress its checks report, beside the updater.
    func updater(progress: CheckReporter.Progress? = nil) -> Updater {
        var config = self.config
        config.keep = keep
        return Updater(
            layout: layout, config: config, channel: RecordingChannel(inner: channel, outcomes: outcomes, progress: progress), logger: .quiet)
    }

    /// One check (`clientctl install`): an installed version is staged as pending.
    @discardableResult
    func check(progress: CheckReporter.Progress? = nil) async throws -> CheckOutcome {
        outcomes.last = nil
        _ = try await updater(progress: progress).install(lockWait: .seconds(5))
        guard let outcome = outcomes.last else { throw HarnessError("the updater did not run a check") }
        return outcome
    }

    /// Serves `name`, forgets earlier requests, checks.
    @discardableResult
    func check(serving name: String, progress: CheckReporter.Progress? = nil) async throws -> CheckOutcome {
        server.serve(name)
        server.clearRequests()
        asked.clear()
        return try await check(progress: progress)
    }

    /// Downloads `name` and switches to it (check + reload + startup complete).
    func install(_ name: String, keep: Int = 1) async throws {
        let outcome = try await check(serving: name)
        guard case .installed = outcome else { throw HarnessError("\(name) not installed: \(outcome)") }
        try await reload()
        try await startupDidComplete(keep: keep)
    }

    /// The page's `switchToPendingVersion` (`clientctl reload`): the pending version becomes
    /// current (the embedded seed's own version runs as the seed, `current` nil).
    func reload() async throws {
        try await updater().reload(lockWait: .seconds(5))
    }

    /// The page's startupDidComplete (`clientctl ack`): commits the trial, then retention
    /// with N = `keep`.
    func startupDidComplete(keep: Int) async throws {
        self.keep = keep
        try await updater().startupDidComplete(lockWait: .seconds(5))
    }

    /// What the next process start runs: a fresh ``Updater/start`` over the same root
    /// (then shut down); `nil` when it runs the embedded seed.
    @discardableResult
    func selectedAfterRestart() async throws -> String? {
        let report = try await restart()
        return report.current.installedID
    }

    /// A fresh agent start over the same root, shut down again.
    func restart() async throws -> LifecycleReport {
        let agent = updater()
        let report = try await agent.start(bridge: nil, clock: MonotonicClock(ManualClock()), lockWait: .seconds(5))
        await agent.shutdown()
        return report
    }

    var installedIDs: Set<String> {
        get throws { Set(try channel.installedVersions().map(\.id)) }
    }

    /// The served file for `urlPath` of the version in use (current or embedded).
    func servedFile(_ urlPath: String, version: String? = nil) throws -> String? {
        let id = version ?? state.current
        let target: InstalledVersion
        if let id, let v = try channel.installedVersions().first(where: { $0.id == id }) {
            target = v
        } else {
            target = try #require(try channel.embeddedVersion())
        }
        return try channel.servedAssets(for: target).first { $0.urlPath == urlPath }?.sourceFile
    }

    func servedContent(_ urlPath: String, version: String? = nil) throws -> String? {
        try servedFile(urlPath, version: version).flatMap { FileManager.default.contents(atPath: $0) }.map { String(decoding: $0, as: UTF8.self) }
    }

    /// `/__cordova/…` request paths expected for the given URL paths (`/` is index.html).
    static func cordova(_ paths: String...) -> Set<String> {
        Set(["/__cordova/manifest.json"] + paths.map { $0 == "/" ? "/__cordova/" : "/__cordova" + $0 })
    }
}

/// The production channel, forwarding every call, with the outcome of each check kept
/// for the test to read (a recording wrapper, not a stand-in: nothing is changed).
struct RecordingChannel: UpdateChannel {
    final class Outcomes: Sendable {
        private let _last = Mutex<CheckOutcome?>(nil)
        var last: CheckOutcome? {
            get { _last.withLock { $0 } }
            set { _last.withLock { $0 = newValue } }
        }
    }

    let inner: MeteorChannel
    let outcomes: Outcomes
    /// Hears the download progress the channel reports, after the updater.
    var progress: CheckReporter.Progress?

    func installedVersions() throws -> [InstalledVersion] { try inner.installedVersions() }
    func embeddedVersion() throws -> InstalledVersion? { try inner.embeddedVersion() }
    func check(state: inout DeviceState, reporter: CheckReporter) async throws -> CheckOutcome {
        let progress = self.progress
        let both = CheckReporter(
            note: { reporter.note($0) },
            progress: {
                reporter.progress(version: $0, completed: $1, total: $2)
                progress?($0, $1, $2)
            })
        let outcome = try await inner.check(state: &state, reporter: both)
        outcomes.last = outcome
        return outcome
    }
    func select(from installed: [InstalledVersion], state: DeviceState) -> InstalledVersion? {
        inner.select(from: installed, state: state)
    }
    func remove(_ version: InstalledVersion) throws { try inner.remove(version) }
    func servedAssets(for version: InstalledVersion) throws -> [ServedAsset] { try inner.servedAssets(for: version) }
    func shellUpdated(state: inout DeviceState) throws { try inner.shellUpdated(state: &state) }
    func recover(state: inout DeviceState, installed: [InstalledVersion]) { inner.recover(state: &state, installed: installed) }
    func servingChanged(state: inout DeviceState) { inner.servingChanged(state: &state) }
    func summary(config: DeviceConfig, state: DeviceState) -> ChannelSummary { inner.summary(config: config, state: state) }
}

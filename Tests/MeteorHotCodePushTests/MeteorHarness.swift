import ClientUpdater
import ClientUpdaterHTTP
import Foundation
import MeteorHotCodePush
import TestSupport
import Testing

/// A device root fed by a ``MeteorMockServer``, driven through ``MeteorChannel`` the way
/// the pipeline drives it: check → stage pending → "reload" (pending becomes current) →
/// "startupDidComplete" (lastKnownGood, retention).
final class MeteorHarness: @unchecked Sendable {
    // @unchecked: used by one test task at a time.
    let temp: TemporaryDirectory
    let layout: RootLayout
    let server: MeteorMockServer
    let transport: MeteorMockTransport
    let embeddedPath: String
    var state = DeviceState()
    var retry = RetryPolicy(maxAttempts: 4, initialDelay: 0.001, maxDelay: 0.002)
    /// Downloads in flight at once (1 makes the order of downloads the manifest's).
    var maxConnections = 3

    /// - Parameters:
    ///   - embedded: the embedded bundle folder (read-only).
    ///   - versions: the folder of downloadable versions the mock serves from.
    /// Set when the mock runs over real HTTP on 127.0.0.1.
    let http: LoopbackHTTPServer?

    ///   - overHTTP: serve the mock on a ``LoopbackHTTPServer`` and download with the
    ///     production ``DefaultTransport`` (default); otherwise hand requests to the mock
    ///     in-process (for scripted connection failures).
    ///   - style: the plugin's test mock, or a server following webapp_server.js.
    init(embedded: String, versions: String, overHTTP: Bool = true, style: MeteorMockServer.Style = .pluginMock) throws {
        temp = try TemporaryDirectory("meteor")
        layout = RootLayout(root: temp.path + "/root")
        try AtomicFile.makeDirectory(layout.root)
        server = MeteorMockServer(versionsDirectory: versions, style: style)
        transport = MeteorMockTransport(server: server)
        http = overHTTP ? try LoopbackHTTPServer(handler: server.loopbackHandler()) : nil
        embeddedPath = embedded
        try channel.resetIfEmbeddedChanged(state: &state)
    }

    deinit { http?.stop() }

    /// The reference fixtures' embedded bundle and downloadable versions.
    static func reference() throws -> MeteorHarness {
        guard let dir = MeteorFixtures.reference else { throw HarnessError("reference fixtures are absent") }
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

    var rootURL: URL { http?.baseURL ?? URL(fileURLWithPath: "/").deletingLastPathComponent() }

    var channel: MeteorChannel {
        if let http {
            return MeteorChannel(
                layout: layout, rootURL: http.baseURL, platform: .ios, embeddedPath: embeddedPath,
                transport: DefaultTransport(), options: .init(maxConnections: maxConnections, retry: retry))
        }
        return MeteorChannel(
            layout: layout, rootURL: URL(string: "http://127.0.0.1:3000/") ?? rootURL, platform: .ios,
            embeddedPath: embeddedPath, transport: transport, options: .init(maxConnections: maxConnections, retry: retry))
    }

    /// One check; an installed version is staged as pending.
    @discardableResult
    func check() async throws -> CheckOutcome {
        var s = state
        let outcome = try await channel.check(state: &s)
        if case .installed(let v) = outcome { Selection.stage(v.id, in: &s) }
        state = s
        return outcome
    }

    /// Serves `name`, forgets earlier requests, checks.
    @discardableResult
    func check(serving name: String) async throws -> CheckOutcome {
        server.serve(name)
        server.clearRequests()
        return try await check()
    }

    /// Downloads `name` and switches to it (check + reload + startup complete).
    func install(_ name: String, keep: Int = 1) async throws {
        let outcome = try await check(serving: name)
        guard case .installed = outcome else { throw HarnessError("\(name) not installed: \(outcome)") }
        try reload()
        try startupDidComplete(keep: keep)
    }

    /// The page reload: pending becomes current (the embedded version is `nil`).
    func reload() throws {
        guard let pending = state.pending else { return }
        let embedded = try channel.embeddedVersion()?.id
        state.current = pending == embedded ? nil : pending
        state.pending = nil
        try channel.refreshMemory(state: &state)
    }

    /// startupDidComplete: lastKnownGood = current, then the pipeline's ``Retention`` with N = `keep`.
    func startupDidComplete(keep: Int) throws {
        state.lastKnownGood = state.current
        let plan = Retention.plan(installed: try channel.installedVersions(), state: state, keep: keep)
        try Retention.apply(plan, channel: channel, layout: layout)
    }

    /// A fresh channel over the same root and state: what the next process start sees.
    func selectedAfterRestart() throws -> String? {
        let fresh = channel
        return fresh.select(from: try fresh.installedVersions(), state: state)?.id
    }

    var installedIDs: Set<String> { Set(((try? channel.installedVersions()) ?? []).map(\.id)) }

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

struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

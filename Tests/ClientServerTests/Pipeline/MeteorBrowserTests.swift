import ClientFoundation
import ClientServer
import ClientShim
import ClientUpdater
import DeviceSetup
import Foundation
import MeteorHotCodePush
import ServingCore
import TestSupport
import Testing

/// The shared pipeline with the Meteor channel, in a real browser: a Meteor root moves
/// from the embedded version1 to version2 (committed), then a version3 whose page never
/// acknowledges fails its startup twice and is blacklisted. On generated legacy-shaped
/// fixtures, and on the reference ones under `Scripts/meteor-reference-replay`. The
/// watchdog runs on a manual clock; the server, the organizer and Chromium are real.
@Suite(.serialized) struct MeteorBrowserTests {
    /// The version a dumped Meteor page says it is (from its runtime config).
    static func pageVersion(_ dom: String) -> String? {
        for v in ["version1", "version2", "version3"] where dom.contains("autoupdateVersionCordova%22%3A%22\(v)%22") { return v }
        return nil
    }

    /// The server state whose page never acknowledges its startup: the reference version3
    /// (its page does not call the shim), or a generated version3 without the script that does.
    static func silentVersion3(_ fixtures: MeteorFixtureFolder) throws -> String {
        guard fixtures.scenario != nil else { return "version3" }
        var content = MeteorScenarioFixtures.content(3)
        content.scripts.removeAll { $0.source.contains("startupDidComplete") }
        try MeteorScenarioFixtures.writeServer(MeteorShapedApp.render(content, shape: .legacy), to: fixtures.versions + "/version3_silent")
        return "version3_silent"
    }

    @Test(arguments: MeteorFixtureSource.legacyAndReference)
    func embeddedToVersion2ThenVersion3IsRolledBackRetriedAndBlacklisted(source: MeteorFixtureSource) async throws {
        let folder = try source.materialize()
        let fixtures = folder.root
        let version3 = try Self.silentVersion3(folder)
        let tmp = try TemporaryDirectory("meteor-browser")
        let layout = RootLayout(root: tmp("root"))
        try AtomicFile.makeDirectory(layout.root)
        let mock = MeteorMockServer(versionsDirectory: fixtures + "/downloadable_versions")
        let rootURL = try #require(URL(string: "http://localhost:3000/"))
        let channel = MeteorChannel(
            layout: layout, rootURL: rootURL, platform: .ios,
            embeddedPath: fixtures + "/bundled_www/application",
            transport: MeteorMockTransport(server: mock), options: .init(logger: .quiet))
        let config = try DeviceConfig(
            app: "com.example.meteor", channelKind: .meteor,
            settings: MeteorSettings(meteorRootURL: rootURL.absoluteString, compatPlatform: "ios"), shellVersion: Version(1, 0, 0),
            embeddedPath: fixtures + "/bundled_www/application", deviceSettings: DeviceSettings(startupTimeoutSeconds: 2))
        let updater = Updater(layout: layout, config: config, channel: channel, logger: .quiet)
        let clock = ManualClock()
        let server = try ClientServer(configuration: ServerConfiguration(port: 0, wwwDirectory: fixtures + "/bundled_www"), logger: .quiet)
        let (ports, portContinuation) = AsyncStream<Int>.makeStream()
        let running = Task { try await server.run { port in portContinuation.yield(port) } }
        defer { running.cancel() }
        var portIterator = ports.makeAsyncIterator()
        let port = try #require(await portIterator.next())
        let url = "http://127.0.0.1:\(port)/"

        let started = try await updater.start(bridge: ServerBridge(server), clock: MonotonicClock(clock))
        server.setControlHandler(UpdaterControl(updater))
        #expect(started.current == .embedded)
        #expect(Self.pageVersion(try await Chromium.dumpDOM(url)) == "version1")
        let events = updater.events()

        // version2: downloaded, staged, switched, acknowledged through the shim endpoint.
        mock.serve("version2")
        #expect(try await updater.checkForUpdates().pending == "version2")
        try await updater.reload()
        var dom = try await Chromium.dumpDOM(url)
        #expect(Self.pageVersion(dom) == "version2")
        #expect(dom.contains(Shim.marker), "the organized page carries the shim")
        let ack = try await Curl.request(url + "__clientctl/startup-complete", method: "POST", headers: ["X-Clientctl-Shim: 1"])
        #expect(ack.status == 200 && ack.body.contains("\"lastKnownGood\":\"version2\""))

        // version3 never acknowledges: rolled back to version2 at the timeout, retried once, blacklisted.
        mock.serve(version3)
        #expect(try await updater.checkForUpdates().pending == "version3")
        for round in 1...2 {
            if round == 2 { #expect(try await updater.checkForUpdates().pending == "version3", "the retry is offered again") }
            try await updater.reload()
            #expect(Self.pageVersion(try await Chromium.dumpDOM(url)) == "version3")
            try await clock.waitForSleeper()
            await clock.advance(by: .seconds(2))
            let failure = await waitForWatchdogFailure(events)
            #expect(failure == .failed(version: "version3", reason: .timedOut, blacklisted: round == 2, revertedTo: .installed("version2")))
        }
        let state = StateStore.load(layout)
        #expect(state.current == "version2" && state.lastKnownGood == "version2")
        #expect(state.blacklist == ["version3"] && state.retry.isEmpty)
        dom = try await Chromium.dumpDOM(url)
        #expect(Self.pageVersion(dom) == "version2", "the page shows version2 again")
        #expect(try await updater.checkForUpdates().pending == nil, "a blacklisted version is never offered again")
        await updater.shutdown()
        withExtendedLifetime(folder) {}
    }

    func waitForWatchdogFailure(_ events: AsyncStream<UpdaterEvent>) async -> WatchdogEvent? {
        for await event in events {
            if case .watchdog(let e) = event, case .failed = e { return e }
        }
        return nil
    }
}

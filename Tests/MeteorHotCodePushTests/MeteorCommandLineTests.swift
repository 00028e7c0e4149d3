import ClientFoundation
import ClientUpdater
import DeviceSetup
import Foundation
import MeteorHotCodePush
import Synchronization
import TestSupport
import Testing

/// `clientctl init --meteor-url` / `install` / `status` / `list` for a Meteor root, over
/// real HTTP on 127.0.0.1 (the mock Meteor server on a ``LoopbackHTTPServer``), with the
/// built binary.
@Suite(.serialized) struct MeteorCommandLineTests {
    final class Device: @unchecked Sendable {
        // @unchecked: owned by one test at a time.
        let temp: TemporaryDirectory
        let mock: MeteorMockServer
        let server: LoopbackHTTPServer
        var root: String { temp.path + "/root" }

        init(delivery: @escaping @Sendable (String) -> LoopbackResponse.Delivery? = { _ in nil }) throws {
            temp = try TemporaryDirectory("meteor-cli")
            mock = MeteorMockServer(versionsDirectory: GeneratedMeteorFixtures.versions)
            server = try LoopbackHTTPServer(handler: mock.loopbackHandler(delivery: delivery))
        }

        deinit { server.stop() }

        func initRoot(_ extra: [String] = []) async throws -> Subprocess.Result {
            try await ClientctlBinary.run(
                [
                    "init", "--root", root, "--meteor-url", server.baseURL.absoluteString + "/",
                    "--embedded", GeneratedMeteorFixtures.embedded,
                ] + extra)
        }

        func install() async throws -> Subprocess.Result {
            try await ClientctlBinary.run(["install", "--root", root, "--json"])
        }

        func json(_ result: Subprocess.Result) throws -> [String: Any] {
            try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
        }
    }

    @Test func initInstallStatusAndListForAMeteorRoot() async throws {
        let d = try Device()
        let initialized = try await d.initRoot(["--compat-platform", "ios", "--keep", "1"])
        #expect(initialized.status == 0, "\(initialized.errorOutput)")
        let config = try DeviceConfig.load(RootLayout(root: d.root))
        let settings = try config.settings(MeteorSettings.self, layout: RootLayout(root: d.root))
        #expect(config.channelKind == .meteor && config.app == "generatedappid" && settings.compatPlatform == "ios" && config.keep == 1)

        d.mock.serve("gen2")
        let installed = try await d.install()
        #expect(installed.status == 0, "\(installed.errorOutput)")
        let report = try d.json(installed)
        #expect(report["result"] as? String == "installed" && report["version"] as? String == "gen2" && report["pending"] as? String == "gen2")
        #expect(d.mock.requestedPathSet == MeteorGeneratedScenarioTests.gen2Requests)
        #expect(FileManager.default.fileExists(atPath: d.root + "/meteor/gen2/app/assets/d00/asset-0.txt"))

        d.mock.clearRequests()
        let again = try await d.install()
        #expect(again.status == 0)
        #expect(try d.json(again)["result"] as? String == "up-to-date")
        #expect(d.mock.requestedPathSet == ["/__cordova/manifest.json"])

        let status = try await ClientctlBinary.run(["status", "--root", d.root, "--json"])
        #expect(status.status == 0, "\(status.errorOutput)")
        #expect(status.output.contains("gen2"))
        let list = try await ClientctlBinary.run(["list", "--root", d.root, "--json"])
        #expect(list.status == 0 && list.output.contains("gen2"))
    }

    @Test func installReportsAVerificationFailureWithExitStatus65() async throws {
        let d = try Device()
        await #expect(try d.initRoot().status == 0)
        d.mock.serve("gen2_wrong_bytes")
        let result = try await d.install()
        #expect(result.status == 65)
        #expect(result.errorOutput.contains("Hash mismatch for asset: /app/app.js"))
        #expect(!FileManager.default.fileExists(atPath: d.root + "/meteor/gen2"))
    }

    @Test(arguments: [
        ["--meteor-url", "ftp://x/"], ["--meteor-url", "http://example.com/"],
        ["--meteor-url", "http://127.0.0.1:1/", "--compat-platform", "windows"],
    ])
    func initRejectsBadFlags(_ flags: [String]) async throws {
        let temp = try TemporaryDirectory("meteor-cli")
        let result = try await ClientctlBinary.run(["init", "--root", temp.path + "/root", "--embedded", GeneratedMeteorFixtures.embedded] + flags)
        #expect(result.status == 64, "\(result.errorOutput)")
        #expect(!FileManager.default.fileExists(atPath: temp.path + "/root/config.json"))
    }

    @Test func initRejectsAnEmbeddedBundleWithoutAppId() async throws {
        let temp = try TemporaryDirectory("meteor-cli")
        let embedded = temp.path + "/embedded"
        try FileManager.default.copyItem(atPath: GeneratedMeteorFixtures.embedded, toPath: embedded)
        try MeteorAppGenerator.indexHTML(GeneratedMeteorFixtures.spec, version: "gen1", appId: "")
            .write(to: URL(fileURLWithPath: embedded + "/index.html"))
        let result = try await ClientctlBinary.run([
            "init", "--root", temp.path + "/root", "--meteor-url", "http://127.0.0.1:1/", "--embedded", embedded,
        ])
        #expect(result.status == 78)
        #expect(result.errorOutput.contains("no appId"))
    }

    /// SIGKILL while assets download; the rerun fetches only what was not finished.
    @Test func aKilledInstallResumesWithoutRedownloadingFinishedAssets() async throws {
        let slow = "/__cordova/assets/d00/asset-1.txt"
        let dripping = LockedFlag(true)
        let d = try Device { path in
            guard path == slow, dripping.value else { return nil }
            var delivery = LoopbackResponse.Delivery()
            delivery.dripBytes = 4
            delivery.dripInterval = 0.5
            return delivery
        }
        await #expect(try d.initRoot().status == 0)
        d.mock.serve("gen2")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ClientctlBinary.path)
        process.arguments = ["install", "--root", d.root]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.runUnmasked()
        let downloading = d.root + "/meteor/Downloading/"
        let finished = ["app/app.js", "app/app.js.map", "app/assets/d00/asset-0.txt", "index.html"]
        try await Poll.until("the fast assets to land in meteor/Downloading") {
            finished.allSatisfy { FileManager.default.fileExists(atPath: downloading + $0) } || !process.isRunning
        }
        #expect(process.isRunning, "the install must still be downloading the slow asset")
        #expect(finished.allSatisfy { FileManager.default.fileExists(atPath: downloading + $0) })
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal)
        #expect(!FileManager.default.fileExists(atPath: d.root + "/meteor/gen2"))

        dripping.value = false
        d.mock.clearRequests()
        let rerun = try await d.install()
        #expect(rerun.status == 0, "\(rerun.errorOutput)")
        #expect(try d.json(rerun)["version"] as? String == "gen2")
        // index.html has no hash and is always fetched again, as in the plugin.
        #expect(d.mock.requestedPathSet == MeteorHarness.cordova("/", "/assets/d00/asset-1.txt"))
        let asset1 = try #require(MeteorAppGenerator.files(GeneratedMeteorFixtures.spec, generation: 2).first { $0.path.hasSuffix("asset-1.txt") })
        #expect(try Digest.hex(.sha1, ofFileAt: d.root + "/meteor/gen2/" + asset1.path) == asset1.hash)
    }
}

/// A Bool shared with a server handler thread.
final class LockedFlag: Sendable {
    private let flag: Mutex<Bool>
    init(_ value: Bool) { flag = Mutex(value) }
    var value: Bool {
        get { flag.withLock { $0 } }
        set { flag.withLock { $0 = newValue } }
    }
}

import ClientEngine
import ClientUpdater
import ClientUpdaterHTTP
import DeviceSetup
import Foundation
import Logging
import TestSupport
import Testing

/// `DeviceEngine.open`, the one entry point of every host: it refuses what is not a root,
/// chooses the channel from the config and uses what the host injects.
@Suite struct DeviceEngineTests {
    @Test func aFolderThatIsNotARootIsRefusedNamingIt() throws {
        let tmp = try TemporaryDirectory("engine-missing")
        let error = try #require(throws: EngineError.self) { try DeviceEngine.open(root: tmp("nowhere")) }
        #expect(error.code == .configInvalid)
        #expect(error.message.contains(tmp("nowhere")) && error.message.contains("clientctl init"), "\(error.message)")
        #expect(!FileManager.default.fileExists(atPath: tmp("nowhere")), "opening creates nothing")
    }

    @Test func aFolderWithoutConfigIsRefused() throws {
        let tmp = try TemporaryDirectory("engine-empty")
        try FileManager.default.createDirectory(atPath: tmp("root"), withIntermediateDirectories: true)
        let error = try #require(throws: UpdaterError.self) { try DeviceEngine.open(root: tmp("root")) }
        #expect(error.code == .configInvalid, "\(error.message)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: tmp("root")).isEmpty, "the folder is left as it was")
    }

    /// The host's transport carries every request of the engine it opened (seed 004's
    /// host-owned transport), and the host's startup timeout replaces the config's.
    @Test func theInjectedTransportAndTimeoutAreTheOnesUsed() async throws {
        let device = try DeviceFixture()
        try device.publish("1.0.0")
        let transport = HeldTransport(DefaultTransport(), holding: "/never-requested")
        let engine = try DeviceEngine.open(
            device.layout, options: .init(transport: transport, startupTimeout: .seconds(7), logger: .quiet))
        #expect(engine.config.channelKind == .signedArchive)
        #expect(engine.config.startupTimeoutSeconds == 7)

        let report = try await engine.updater.install()
        #expect(report.result == .installed && report.version == "1.0.0", "\(report.message)")
        #expect(transport.requests(to: "/stable/manifest.json") == 1)
        #expect(transport.requests(to: "/stable/v1.0.0.tar.gz") == 1)
        #expect(device.requests(to: "/stable/v1.0.0.tar.gz").count == 1, "no request went around the host's transport")

        let onDisk = try DeviceConfig.load(device.layout)
        #expect(onDisk.startupTimeoutSeconds == 120, "the override is the host's, never written to the root")
    }

    /// The host's logger gets the engine's lines, at their levels: the channel's (what it
    /// downloads and installs) and the updater's own (its events, progress at `trace`).
    @Test func theInjectedLoggerHearsTheChannelAndTheUpdater() async throws {
        let device = try DeviceFixture()
        try device.publish("1.0.0")
        let lines = RecordingLogHandler.Lines()
        var logger = Logger(label: "host.app") { _ in RecordingLogHandler(lines: lines) }
        logger.logLevel = .trace
        let engine = try DeviceEngine.open(device.layout, options: .init(logger: logger))

        let report = try await engine.updater.install()
        #expect(report.result == .installed, "\(report.message)")
        let heard = lines.all
        #expect(heard.contains { $0.level == .info && $0.message.hasPrefix("downloading release 1.0.0: ") }, "\(heard)")
        #expect(heard.contains { $0.level == .info && $0.message == "installed release 1.0.0" }, "\(heard)")
        #expect(heard.contains { $0.level == .trace && $0.message.hasPrefix("downloading 1.0.0: ") }, "\(heard)")
    }
}

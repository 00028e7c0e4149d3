import ClientFoundation
import ClientUpdater
import DeviceSetup
import Foundation
import TestSupport
import Testing

@Suite struct UpdaterTests {
    let tmp: TemporaryDirectory
    let layout: RootLayout
    let channel: FakeChannel
    let updater: Updater

    init() throws {
        tmp = try TemporaryDirectory("updater")
        layout = RootLayout(root: tmp.path)
        let shell = try #require(Version("2.0.0"))
        channel = FakeChannel(storeDirectory: tmp("clients"), shell: shell)
        let config = DeviceConfig(app: "com.example.notes", channelKind: .init(rawValue: "fake"), shellVersion: shell)
        updater = Updater(layout: layout, config: config, channel: channel, logger: .quiet)
    }

    @Test func installStagesTheNewVersionAsPending() async throws {
        let v = try channel.addInstalled("1.0.0")
        channel.enqueue(.success(.installed(v)))
        let report = try await updater.install()
        #expect(report.result == .installed)
        #expect(report.pending == "1.0.0")
        let state = StateStore.load(layout)
        #expect(state.pending == "1.0.0")
        #expect(state.current == nil)
        let status = try await updater.status()
        #expect(status.current == .embedded)
        #expect(status.selected == .installed("1.0.0"))
        #expect(status.lastCheck?.result == "installed")
    }

    @Test func failedCheckLeavesStateByteIdenticalAndRecordsTheFailure() async throws {
        let v = try channel.addInstalled("1.0.0")
        channel.enqueue(.success(.installed(v)))
        _ = try await updater.install()
        let before = try Data(contentsOf: URL(fileURLWithPath: layout.state))
        channel.enqueue(.failure(UpdaterError(.hashMismatch, "v1.1.0.tar.gz: sha256 mismatch")))
        await #expect(throws: UpdaterError.self) { try await updater.install() }
        #expect(try Data(contentsOf: URL(fileURLWithPath: layout.state)) == before)
        let status = try await updater.status()
        #expect(status.lastCheck?.result == "rejected")
        #expect(status.lastCheck?.message == "v1.1.0.tar.gz: sha256 mismatch")
    }

    @Test func selectionPicksHighestCompatibleNotBlacklisted() throws {
        let shell = try #require(Version("2.0.0"))
        let a = try channel.addInstalled("1.0.0")
        let b = try channel.addInstalled("1.10.0")
        let c = try channel.addInstalled("1.9.0")
        let tooNew = try channel.addInstalled("3.0.0", minShell: Version("3.0.0"))
        let tooOld = try channel.addInstalled("2.5.0", maxShell: Version("1.9.9"))
        let all = [a, b, c, tooNew, tooOld]
        #expect(Selection.highestCompatible(all, shell: shell, blacklist: [])?.id == "1.10.0")
        #expect(Selection.highestCompatible(all, shell: shell, blacklist: ["1.10.0"])?.id == "1.9.0")
        #expect(Selection.highestCompatible([tooNew], shell: shell, blacklist: []) == nil)
    }

    @Test func corruptStateIsRebuiltFromInstalledVersionsWithoutDeletingThem() async throws {
        try channel.addInstalled("1.0.0")
        try channel.addInstalled("1.2.0")
        try Data(repeating: 0, count: 64).write(to: URL(fileURLWithPath: layout.state))
        channel.enqueue(.success(.upToDate("up to date")))
        _ = try await updater.install()
        let state = StateStore.load(layout)
        #expect(state.memory(FakeChannel.Memory.self)?.highestAccepted == "1.2.0", "the channel restored its memory")
        #expect(try channel.installedVersions().map(\.id) == ["1.0.0", "1.2.0"])
        let aside = try FileManager.default.contentsOfDirectory(atPath: tmp.path).filter { $0.hasPrefix("state.json.corrupt-") }
        #expect(aside.count == 1)
    }

    @Test func secondProcessWaitsForTheLockThenReportsBusy() async throws {
        let holder = try await FileLock.acquire(path: layout.lock, wait: .zero)
        await #expect(throws: UpdaterError.self) { try await updater.install(lockWait: .milliseconds(50)) }
        withExtendedLifetime(holder) {}
    }
}

import ClientFoundation
import ClientUpdater
import Foundation
import SignedArchive
import TestSupport
import Testing

/// The signed-archive channel end to end over a real loopback HTTP server.
@Suite struct ArchiveInstallTests {
    @Test func installsThenUpgradesThenSelectsTheNewest() async throws {
        let f = try DeviceFixture()
        try f.publish("1.0.0")
        let first = try await f.updater().install()
        #expect(first.result == .installed)
        #expect(first.version == "1.0.0")
        #expect(first.pending == "1.0.0")
        let index = try String(contentsOfFile: f.layout.clientDirectory(Version(1, 0, 0)) + "/index.html", encoding: .utf8)
        #expect(index.contains("<p id=\"version\">1.0.0</p>"))
        #expect(FileManager.default.fileExists(atPath: f.layout.clientSidecar(Version(1, 0, 0))))

        try f.publish("1.1.0")
        let second = try await f.updater().install()
        #expect(second.result == .installed)
        #expect(second.version == "1.1.0")
        let status = try await f.updater().status()
        #expect(status.selected == .installed("1.1.0"))
        #expect(status.pending == "1.1.0")
        #expect(status.current == .embedded)
        #expect(status.highestAccepted == "1.1.0")
        #expect(status.installed.map(\.version).sorted() == ["1.0.0", "1.1.0"])
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: f.layout.clients).filter { $0.hasPrefix(".") }
        #expect(leftovers.isEmpty, "staging left behind: \(leftovers)")
    }

    @Test func unchangedManifestIsAConditionalGetAnswered304() async throws {
        let f = try DeviceFixture()
        try f.publish("1.0.0")
        _ = try await f.updater().install()
        let before = try f.snapshot()
        let again = try await f.updater().install()
        #expect(again.result == .upToDate)
        let manifestRequests = f.requests(to: "/stable/manifest.json")
        #expect(manifestRequests.count == 2)
        #expect(manifestRequests.last?.headers["if-none-match"] != nil)
        #expect(f.server.log.last?.status == 304)
        #expect(try f.snapshot() == before)
    }

    @Test func tooNewReleaseIsSkippedForTheNewestCompatibleOneInIndexJson() async throws {
        let f = try DeviceFixture(shell: "1.5.0")
        try f.publish("1.0.0")
        try f.publish("1.1.0")
        try f.publish("1.2.0", minShell: "1.0.0", maxShell: "1.4.0")  // too old a shell range
        try f.publish("2.0.0", minShell: "2.0.0")  // needs a newer shell; it is manifest.json
        let report = try await f.updater().install()
        #expect(report.result == .installed)
        #expect(report.version == "1.1.0")
        #expect(f.requests(to: "/stable/index.json").count == 1)
        #expect(f.requests(to: "/stable/v2.0.0.tar.gz").isEmpty)
    }

    @Test func nothingCompatibleIsReportedAndNothingChanges() async throws {
        let f = try DeviceFixture(shell: "1.0.0")
        try f.publish("2.0.0", minShell: "2.0.0")
        let report = try await f.updater().install()
        #expect(report.result == .noCompatibleRelease)
        #expect(report.message.contains("release 2.0.0 needs a shell of at least 2.0.0; this shell is 1.0.0"))
        #expect(try f.snapshot().entries.keys.filter { $0.hasPrefix("clients/v") }.isEmpty)
        #expect(f.requests(to: "/stable/v2.0.0.tar.gz").isEmpty)
        let status = try await f.updater().status()
        #expect(status.pending == nil)
        #expect(status.highestAccepted == nil)
    }

    @Test func expiredFeedKeepsWhatTheDeviceHas() async throws {
        let f = try DeviceFixture()
        try f.publish("1.0.0")
        _ = try await f.updater().install()
        try f.publish("1.1.0") {
            $0["published"] = .string("2019-12-01T00:00:00Z")
            $0["expires"] = .string("2020-01-01T00:00:00Z")
        }
        let before = try f.snapshot()
        let report = try await f.updater().install()
        #expect(report.result == .stale)
        #expect(report.message.contains("release 1.1.0 expired at 2020-01-01T00:00:00Z"))
        #expect(try f.snapshot() == before)
    }
}

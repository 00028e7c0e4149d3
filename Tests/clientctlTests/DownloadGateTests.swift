import ClientFoundation
import ClientUpdater
import ClientUpdaterHTTP
import DeviceSetup
import Foundation
import SignedArchive
import SignedManifest
import StrictJSON
import Synchronization
import TestSupport
import Testing

/// The download policy's link and holds at a check (docs/download-policy.md), with a real
/// feed on loopback and the channel's probe and holds given by the test: a metered link with
/// `never` defers, with `patches:SIZE` takes a small patch and defers a bigger one; a hold in
/// force defers until it ends; a hold taken while the archive downloads stops it, and the
/// next check resumes the partial download.
@Suite struct DownloadGateTests {
    /// Holds as a test sets them: `current` in force now, and `waitForHold` returning once
    /// `taken` says so.
    final class TestHolds: DownloadHolding, Sendable {
        let hold = Mutex<DownloadHold?>(nil)
        let taken: @Sendable () -> Bool

        init(hold: DownloadHold? = nil, taken: @escaping @Sendable () -> Bool = { false }) {
            self.hold.withLock { $0 = hold }
            self.taken = taken
        }

        func current() -> DownloadHold? { hold.withLock { $0 } }

        func waitForHold() async throws {
            // Waits on the condition the test makes (bytes on disk), not on a time.
            while current() == nil, !taken() { try await Task.sleep(for: .milliseconds(5)) }
        }
    }

    static func updater(_ d: DeviceFixture, metered: Bool = false, holds: any DownloadHolding = NoDownloadHolds()) throws -> Updater {
        let downloader = Downloader(
            transport: DefaultTransport(settings: HTTPTransportSettings()), retry: RetryPolicy(maxAttempts: 3, initialDelay: .zero, maxDelay: .zero),
            idleTimeout: .seconds(30))
        var channel = try ArchiveChannel(layout: d.layout, config: d.config, downloader: downloader, logger: .quiet)
        channel.downloadGate = DownloadGate(
            probe: FixedLinkProbe(LinkReading(metered: metered, source: "test: metered=\(metered)")), holds: holds)
        return Updater(layout: d.layout, config: d.config, channel: channel, logger: .quiet)
    }

    static func setMetered(_ d: DeviceFixture, _ mode: String?) async throws {
        _ = try await DeviceConfig.edit(d.layout) { $0.metered = mode }
    }

    @Test func aMeteredLinkDefersWithNeverAndTakesOnlyASmallEnoughPatch() async throws {
        let f = try DeltaDeviceTests.Feed()
        try await f.publish("1.0.0")
        _ = try await f.install()

        try await Self.setMetered(f.d, "never")
        try await f.publish("1.1.0", seeds: DeltaDeviceTests.changed)
        var mark = try await f.d.server.settledLog().count
        let never = try await Self.updater(f.d, metered: true).install()
        #expect(never.result == .deferred, "\(never)")
        #expect(never.message.contains("metered never") && never.message.contains("(test: metered=true)"), "\(never.message)")
        #expect(never.deferredUntil == nil, "only the link frees it")
        #expect(try await f.paths(since: mark).allSatisfy { !$0.hasSuffix(".tar.gz") && !$0.contains("/patches/") }, "nothing downloaded")

        let patch = try #require(try f.delta().patches.first)
        try await Self.setMetered(f.d, "patches:\(patch.size)")
        mark = try await f.d.server.settledLog().count
        let small = try await Self.updater(f.d, metered: true).install()
        #expect(small.result == .installed && small.version == "1.1.0", "\(small)")
        let paths = try await f.paths(since: mark)
        #expect(paths.contains { $0.contains("/patches/") } && !paths.contains { $0.hasSuffix(".tar.gz") }, "\(paths)")
        try f.expectInstalledTree("1.1.0")

        try await f.publish("1.2.0", seeds: [7: 7007, 8: 7008, 9: 7009, 200: 7200])
        let bigger = try #require(try f.delta().patches.first { $0.from == Version(1, 1, 0) })
        #expect(bigger.size > 1024)
        try await Self.setMetered(f.d, "patches:1KiB")
        mark = try await f.d.server.settledLog().count
        let over = try await Self.updater(f.d, metered: true).install()
        #expect(over.result == .deferred && over.message.contains("-byte patch is over the 1024-byte limit"), "\(over)")
        #expect(try await f.paths(since: mark).allSatisfy { !$0.hasSuffix(".tar.gz") && !$0.contains("/patches/") })
        // Off the metered link, the same policy takes it.
        let home = try await Self.updater(f.d, metered: false).install()
        #expect(home.result == .installed && home.version == "1.2.0", "\(home)")
    }

    @Test func aHoldInForceDefersUntilItEnds() async throws {
        let d = try DeviceFixture()
        try d.publish("1.0.0")
        let until = Date().addingTimeInterval(600).rounded()
        let holds = TestHolds(hold: DownloadHold(holders: ["the page"], until: until))
        let held = try await Self.updater(d, holds: holds).install()
        #expect(held.result == .deferred, "\(held)")
        #expect(held.deferredUntil == until)
        #expect(held.message.contains("downloads are held until \(RFC3339.format(until))"), "\(held.message)")
        #expect(d.requests(to: "/stable/v1.0.0.tar.gz").isEmpty)
        #expect(try d.snapshot().entries.keys.filter { $0.hasPrefix("clients/v") }.isEmpty)
        holds.hold.withLock { $0 = nil }
        let free = try await Self.updater(d, holds: holds).install()
        #expect(free.result == .installed && free.version == "1.0.0", "\(free)")
    }

    @Test func aHoldTakenWhileTheArchiveDownloadsStopsItAndTheNextCheckResumes() async throws {
        let d = try DeviceFixture()
        try d.publish("1.0.0")
        // The archive stalls after its first 200 bytes; the hold is taken once they are on disk.
        let archive = try #require(try FileManager.default.attributesOfItem(atPath: d.tmp("releases") + "/stable/v1.0.0.tar.gz")[.size] as? Int)
        #expect(archive > 200)
        d.faults.first(1, .stall(afterBytes: 200), path: "/stable/v1.0.0.tar.gz")
        let clients = d.layout.root + "/clients"
        let holds = TestHolds(taken: {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: clients)) ?? []
            return names.contains { name in
                name.hasPrefix(".staging-partial-v1.0.0")
                    && ((try? FileManager.default.attributesOfItem(atPath: clients + "/" + name)[.size] as? Int) ?? 0) >= 200
            }
        })
        let stopped = try await Self.updater(d, holds: holds).install()
        #expect(stopped.result == .deferred, "\(stopped)")
        #expect(stopped.message.contains("a hold was taken while it ran"), "\(stopped.message)")
        let partial = try #require(try FileManager.default.contentsOfDirectory(atPath: clients).first { $0.hasPrefix(".staging-partial-v1.0.0") })
        #expect(((try FileManager.default.attributesOfItem(atPath: clients + "/" + partial)[.size] as? Int) ?? 0) >= 200, "the partial stays")

        let resumed = try await Self.updater(d).install()
        #expect(resumed.result == .installed && resumed.version == "1.0.0", "\(resumed)")
        let ranged = d.requests(to: "/stable/v1.0.0.tar.gz").last?.headers["range"]
        #expect(ranged == "bytes=200-", "resumed with Range: \(String(describing: ranged))")
    }
}

extension Date {
    fileprivate func rounded() -> Date { Date(timeIntervalSince1970: timeIntervalSince1970.rounded(.down)) }
}

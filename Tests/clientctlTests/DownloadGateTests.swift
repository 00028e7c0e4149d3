import ClientFoundation
import ClientUpdater
import ClientUpdaterHTTP
import DeviceSetup
import Foundation
import SignedManifest
import StrictJSON
import Synchronization
import TestSupport
import Testing

@testable import SignedArchive

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
            try await Poll.until("a hold in force, or taken by the test", timeout: 120, every: .milliseconds(5)) {
                current() != nil || taken()
            }
        }
    }

    static func updater(
        _ d: DeviceFixture, metered: Bool = false, holds: any DownloadHolding = NoDownloadHolds(), now: @escaping @Sendable () -> Date = { Date() },
        gateClock: MonotonicClock = .continuous
    ) throws -> Updater {
        let downloader = Downloader(
            transport: DefaultTransport(settings: HTTPTransportSettings()), retry: RetryPolicy(maxAttempts: 3, initialDelay: .zero, maxDelay: .zero),
            idleTimeout: .seconds(30))
        var channel = try ArchiveChannel(layout: d.layout, config: d.config, downloader: downloader, now: now, logger: .quiet)
        channel.downloadGate = DownloadGate(
            probe: FixedLinkProbe(LinkReading(metered: metered, source: "test: metered=\(metered)")), holds: holds, clock: gateClock)
        return Updater(layout: d.layout, config: d.config, channel: channel, now: now, logger: .quiet)
    }

    /// A wall clock that starts at `start` and runs with real time.
    static func clock(from start: Date) -> @Sendable () -> Date {
        let origin = Date()
        return { start.addingTimeInterval(Date().timeIntervalSince(origin)) }
    }

    /// The size of the file at `path`, 0 when there is none.
    static func size(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? nil) ?? 0
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

extension DownloadGateTests {
    /// A download window that closes while the archive downloads stops it at the close, as a
    /// hold does: what arrived stays, the check ends deferred until the next opening, and the
    /// check in the next window resumes with Range. Before, the window was judged once, when
    /// the check started, and the download ran on past the close.
    @Test func aWindowThatClosesStopsTheDownloadInFlightAndTheNextWindowResumes() async throws {
        let d = try DeviceFixture()
        try d.publish("1.0.0")
        _ = try await DeviceConfig.edit(d.layout) { $0.downloadWindows = ["01:00-05:00@UTC"] }
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = try #require(TimeZone(identifier: "UTC"))
        let day = utc.startOfDay(for: Date().addingTimeInterval(2 * 86_400))
        let closes = day.addingTimeInterval(5 * 3600)
        // The archive stalls after its first 200 bytes; the window closes a second into the check.
        d.faults.first(1, .stall(afterBytes: 200), path: "/stable/v1.0.0.tar.gz")
        let stopped = try await Self.updater(d, now: Self.clock(from: closes.addingTimeInterval(-1))).install()
        #expect(stopped.result == .deferred, "\(stopped)")
        #expect(stopped.message.contains("closed at \(RFC3339.format(closes)) while it ran"), "\(stopped.message)")
        #expect(stopped.deferredUntil == day.addingTimeInterval(25 * 3600), "until the next opening: \(stopped)")
        let clients = d.layout.root + "/clients"
        let partial = try #require(try FileManager.default.contentsOfDirectory(atPath: clients).first { $0.hasPrefix(".staging-partial-v1.0.0") })
        #expect(Self.size(clients + "/" + partial) == 200, "what arrived stays")

        let resumed = try await Self.updater(d, now: Self.clock(from: day.addingTimeInterval(25 * 3600 + 60))).install()
        #expect(resumed.result == .installed && resumed.version == "1.0.0", "\(resumed)")
        #expect(d.requests(to: "/stable/v1.0.0.tar.gz").last?.headers["range"] == "bytes=200-")
    }

    /// A wall clock set back out of the window while a download runs stops it at the
    /// watcher's next look (at most 30 s on the monotonic clock), keeping what arrived. The
    /// close reckoned at the start is then hours away: before, the download ran on outside
    /// the window (found by Scripts/simulate --seed 2 --no-compare --long-downloads).
    @Test func aWallClockSetBackOutOfTheWindowStopsTheDownloadInFlight() async throws {
        let d = try DeviceFixture()
        try d.publish("1.0.0")
        _ = try await DeviceConfig.edit(d.layout) { $0.downloadWindows = ["01:00-05:00@UTC"] }
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = try #require(TimeZone(identifier: "UTC"))
        let day = utc.startOfDay(for: Date().addingTimeInterval(2 * 86_400))
        // 03:00, inside the window; the archive stalls after its first 200 bytes.
        let wall = Mutex(day.addingTimeInterval(3 * 3600))
        d.faults.first(1, .stall(afterBytes: 200), path: "/stable/v1.0.0.tar.gz")
        let clock = ManualClock()
        let updater = try Self.updater(d, now: { wall.withLock { $0 } }, gateClock: MonotonicClock(clock))
        let check = Task { [updater] in try await updater.install() }
        let clients = d.layout.root + "/clients"
        try await Poll.until("the first 200 bytes are on disk") {
            let partial = (try? FileManager.default.contentsOfDirectory(atPath: clients))?.first { $0.hasPrefix(".staging-partial-v1.0.0") }
            return partial.map { Self.size(clients + "/" + $0) == 200 } ?? false
        }
        try await clock.waitForSleeper()
        wall.withLock { $0 = day.addingTimeInterval(-3600) }  // 23:00 the day before: no window
        await clock.advance(by: .seconds(30))
        let stopped = try await check.value
        #expect(stopped.result == .deferred, "\(stopped)")
        #expect(stopped.message.contains("download windows"), "\(stopped.message)")
        #expect(stopped.deferredUntil == day.addingTimeInterval(3600), "until the window opens: \(stopped)")
        let partial = try #require(try FileManager.default.contentsOfDirectory(atPath: clients).first { $0.hasPrefix(".staging-partial-v1.0.0") })
        #expect(Self.size(clients + "/" + partial) == 200, "what arrived stays")
    }

    /// A hold taken while the per-file path downloads keeps what it fetched: the file list
    /// and the objects that arrived stay, and the next check fetches only the rest, resuming
    /// the object it was in the middle of. Before, the stopped check fell through to the
    /// archive path, which cleaned the list and the objects away, and all came again.
    @Test func aHoldOnThePerFilePathKeepsWhatItFetched() async throws {
        let f = try await DeltaFileListTests.behindThePatches()
        let (files, _) = try DeltaFileListTests.list(f)
        // The object of assets/f7.js (2,049 bytes) stalls after 1,000; index.html's arrives whole.
        let f7 = Digest.hex(.sha256, of: [UInt8](try Data(contentsOf: URL(fileURLWithPath: f.d.tmp("src-1.2.0") + "/assets/f7.js"))))
        let objectPath = "/stable/" + files.objects + f7
        f.d.faults.first(1, .stall(afterBytes: 1000), path: objectPath)
        let objects = FileListInstall.objectsFolder(layout: f.d.layout)
        let page = [UInt8](try Data(contentsOf: URL(fileURLWithPath: f.d.tmp("src-1.2.0") + "/index.html")))
        let index = Digest.hex(.sha256, of: page)
        let holds = TestHolds(taken: { Self.size(objects + "/" + f7) >= 1000 && Self.size(objects + "/" + index) == page.count })
        let mark = try await f.d.server.settledLog().count
        let stopped = try await Self.updater(f.d, holds: holds).install()
        #expect(stopped.result == .deferred && stopped.message.contains("a hold was taken while it ran"), "\(stopped)")
        #expect(FileManager.default.fileExists(atPath: FileListInstall.listPath(layout: f.d.layout, files: files)), "the list stays")
        #expect(Self.size(objects + "/" + f7) == 1000, "the object's bytes stay")
        let first = try await f.paths(since: mark)
        #expect(first.contains("/stable/\(files.url)") && !first.contains { $0.hasSuffix(".tar.gz") }, "\(first)")

        let again = try await f.d.server.settledLog().count
        let resumed = try await Self.updater(f.d).install()
        #expect(resumed.result == .installed && resumed.version == "1.2.0", "\(resumed)")
        let second = try await f.paths(since: again)
        #expect(second == ["/stable/manifest.json", objectPath], "only the rest: \(second)")
        #expect(f.d.requests(to: objectPath).last?.headers["range"] == "bytes=1000-")
        try f.expectInstalledTree("1.2.0")
    }
}

extension Date {
    fileprivate func rounded() -> Date { Date(timeIntervalSince1970: timeIntervalSince1970.rounded(.down)) }
}

import ClientFoundation
import ClientUpdater
import Foundation
import Synchronization
import TestSupport
import Testing

@testable import ClientEngine

/// The download holds' lease registry (docs/download-policy.md#holds): bounded, renewable,
/// on the monotonic clock, so a wall clock that moves neither ends a lease early nor makes
/// one last. No test sleeps: the clocks move only when the test moves them.
@Suite struct DownloadHoldsTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    /// A wall clock and a manual monotonic clock: ``advance(_:)`` moves both, ``jump(_:)``
    /// only the wall clock (someone set it).
    final class TestClock: Sendable {
        private let wall = Mutex(DownloadHoldsTests.start)
        let manual = ManualClock()
        var now: @Sendable () -> Date { { self.wall.withLock { $0 } } }
        func advance(_ seconds: Int64) async {
            wall.withLock { $0 = $0.addingTimeInterval(TimeInterval(seconds)) }
            await manual.advance(by: .seconds(seconds))
        }
        func jump(_ seconds: TimeInterval) { wall.withLock { $0 = $0.addingTimeInterval(seconds) } }
    }

    @Test func aLeaseHoldsUntilItsEndAndNotAtIt() {
        var leases = DownloadHoldLeases()
        #expect(leases.hold(lease: "page-a", holder: "the page", for: .seconds(120), at: .seconds(10)) == .seconds(120))
        #expect(leases.inForce(at: .seconds(129))?.end == .seconds(130))
        #expect(leases.inForce(at: .seconds(130)) == nil, "a lease ending exactly now no longer holds")
    }

    @Test func aLeaseIsRenewedCappedAndLetGo() {
        var leases = DownloadHoldLeases()
        leases.hold(lease: "page-a", holder: "the page", for: .seconds(60), at: .zero)
        // Renewed before its end: it runs from the renewal.
        leases.hold(lease: "page-a", holder: "the page", for: .seconds(60), at: .seconds(50))
        #expect(leases.inForce(at: .seconds(100))?.end == .seconds(110))
        // Asking for a day holds at most the cap, as an apply lease.
        #expect(leases.hold(lease: "page-a", holder: "the page", for: .seconds(86_400), at: .seconds(100)) == DownloadHoldLeases.maxLease)
        #expect(leases.inForce(at: .seconds(100))?.end == .seconds(100) + DownloadHoldLeases.maxLease)
        // Zero, or less, lets go.
        #expect(leases.hold(lease: "page-a", holder: "the page", for: .zero, at: .seconds(101)) == .zero)
        #expect(leases.inForce(at: .seconds(101)) == nil && leases.count == 0)
        leases.hold(lease: "page-a", holder: "the page", for: .seconds(60), at: .seconds(101))
        leases.hold(lease: "page-a", holder: "the page", for: .seconds(-5), at: .seconds(102))
        #expect(leases.inForce(at: .seconds(102)) == nil)
    }

    @Test func holdersAreNamedOnceAndTheLastEndCounts() {
        var leases = DownloadHoldLeases()
        leases.hold(lease: "page-a", holder: "the page", for: .seconds(60), at: .zero)
        leases.hold(lease: "page-b", holder: "the page", for: .seconds(30), at: .zero)
        leases.hold(lease: "backup", holder: "process 'backup'", for: .seconds(300), at: .zero)
        let held = leases.inForce(at: .seconds(1))
        #expect(held?.holders == ["process 'backup'", "the page"] && held?.end == .seconds(300))
        // The page is gone (pagehide, its web process): only its leases end.
        leases.release(prefix: "page-")
        #expect(leases.inForce(at: .seconds(1))?.holders == ["process 'backup'"])
        leases.release()
        #expect(leases.inForce(at: .seconds(1)) == nil)
    }

    @Test func aFloodOfLeasesIsBounded() {
        var leases = DownloadHoldLeases()
        for n in 0..<1_000 { leases.hold(lease: "flood-\(n)", holder: "the page", for: .seconds(60), at: .seconds(Int64(n))) }
        #expect(leases.count == DownloadHoldLeases.maxLeases)
        // The leases ending first went: the last taken still hold.
        #expect(leases.inForce(at: .seconds(60 + 998))?.end == .seconds(60 + 999))
        leases.expire(at: .seconds(60 + 999))
        #expect(leases.count == 0)
    }

    @Test func theRegistrySaysWhoHoldsAndUntilWhenOnTheDevicesTime() async {
        let clock = TestClock()
        let holds = DownloadHolds(now: clock.now, clock: MonotonicClock(clock.manual))
        #expect(holds.current() == nil)
        let until = holds.hold(lease: "page-x", holder: "the page", for: .seconds(120))
        #expect(until == Self.start.addingTimeInterval(120))
        #expect(holds.current() == DownloadHold(holders: ["the page"], until: until))
        // A lease asked for a day holds ten minutes.
        #expect(holds.hold(lease: "page-x", holder: "the page", for: .seconds(86_400)) == Self.start.addingTimeInterval(600))
        await clock.advance(599)
        #expect(holds.current()?.until == Self.start.addingTimeInterval(600))
        await clock.advance(1)
        #expect(holds.current() == nil, "a lease not renewed runs out")
        // Let go at once with zero.
        holds.hold(lease: "page-x", holder: "the page", for: .seconds(60))
        #expect(holds.hold(lease: "page-x", holder: "the page", for: .zero) == Self.start.addingTimeInterval(600))
        #expect(holds.current() == nil)
    }

    /// The wall clock set back a year or ahead thirty: the lease still ends 60 s (monotonic)
    /// after it was taken, neither earlier nor later.
    @Test func aWallClockThatMovesNeitherEndsALeaseEarlyNorMakesItLast() async {
        let clock = TestClock()
        let holds = DownloadHolds(now: clock.now, clock: MonotonicClock(clock.manual))
        holds.hold(lease: "page-x", holder: "the page", for: .seconds(60))
        clock.jump(86_400 * 365 * 30)
        await clock.advance(59)
        #expect(holds.current()?.until == Self.start.addingTimeInterval(86_400 * 365 * 30 + 60))
        clock.jump(-86_400 * 365 * 31)
        await clock.advance(1)
        #expect(holds.current() == nil, "set back a year, the lease still ended on time")
    }

    @Test func waitingForAHoldReturnsOnceOneIsTaken() async throws {
        let clock = TestClock()
        let holds = DownloadHolds(now: clock.now, clock: MonotonicClock(clock.manual))
        let waited = Task { try await holds.waitForHold() }
        await holds.waitForWaiting(1)  // the download waits for a hold
        #expect(holds.waiting == 1)
        // Letting go of a lease not held takes no hold: the download goes on.
        holds.hold(lease: "page-x", holder: "the page", for: .zero)
        #expect(holds.waiting == 1)
        holds.hold(lease: "page-x", holder: "the page", for: .seconds(30))
        try await waited.value
        #expect(holds.waiting == 0)
        // A hold in force: a download that starts now stops at once.
        try await holds.waitForHold()
        await clock.advance(30)
        let again = Task { try await holds.waitForHold() }
        await holds.waitForWaiting(1)  // a second wait
        #expect(holds.waiting == 1)
        again.cancel()
        await #expect(throws: CancellationError.self) { try await again.value }
        #expect(holds.waiting == 0, "a cancelled wait leaves nothing behind")
    }

    /// serve's control handler takes a page's lease (`page-…`) and a local process's into
    /// the engine's registry, the one the channel's download policy reads, naming each holder.
    @Test func servesControlTakesHoldsIntoTheEnginesRegistry() async throws {
        let device = try DeviceFixture()
        let engine = try DeviceEngine.open(device.layout, options: .init(logger: .quiet))
        let agent = DeviceAgent(engine, bridge: DeviceAgentServiceTests.NoBridge(), checkEvery: .zero)
        let control = AgentControl(agent)
        #expect(engine.downloadHolds.current() == nil)
        _ = try await control.holdDownloads(lease: "page-k3x9", for: .seconds(120), version: "1.0.0")
        _ = try await control.holdDownloads(lease: "backup", for: .seconds(86_400), version: nil)
        let held = try #require(engine.downloadHolds.current())
        #expect(held.holders == ["process 'backup'", "the page"])
        #expect(held.until <= Date().addingTimeInterval(600), "a day asked, at most ten minutes held: \(held.until)")
        _ = try await control.holdDownloads(lease: "backup", for: .zero, version: nil)
        #expect(engine.downloadHolds.current()?.holders == ["the page"])
        agent.downloadHolds.release(prefix: "page-")
        #expect(engine.downloadHolds.current() == nil)
    }

    /// The engine's registry is the one its channel's download policy reads: a hold taken
    /// through serve's control defers a check's download until the lease ends (nothing is
    /// staged, the report says until when); let go, the next check downloads.
    @Test func aHoldTakenThroughServesControlDefersTheChecksDownload() async throws {
        let device = try DeviceFixture()
        try await device.installAndCommit(["1.0.0"])
        let engine = try DeviceEngine.open(device.layout, options: .init(logger: .quiet))
        let agent = DeviceAgent(engine, bridge: DeviceAgentServiceTests.NoBridge(), checkEvery: .zero)
        let control = AgentControl(agent)
        let until = try await control.holdDownloads(lease: "page-k3x9", for: .seconds(300), version: "1.0.0")
        try device.publish("1.1.0")
        let held = try await agent.checkForUpdates()
        // The hold's end as the registry reads it at the check (the wall clock and the
        // monotonic one read apart by the moment between).
        let end = try #require(held.deferredUntil, "\(held)")
        #expect(held.result == .deferred && abs(end.timeIntervalSince(until)) < 1, "\(held) until \(end), held until \(until)")
        #expect(StateStore.load(device.layout).pending == nil, "nothing staged while the page holds")
        _ = try await control.holdDownloads(lease: "page-k3x9", for: .zero, version: "1.0.0")
        let free = try await agent.checkForUpdates()
        #expect(free.result != .deferred && StateStore.load(device.layout).pending == "1.1.0", "\(free)")
    }
}

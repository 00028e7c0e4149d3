import ClientEngine
import ClientFoundation
import ClientUpdater
import Foundation
import TestSupport
import Testing

/// A check someone asks the agent for (a page's `checkForUpdates()` under `serve` or in the
/// shell) that ends deferred moves the agent's own next check to the moment the deferral
/// ends, as a deferred periodic check does (docs/download-policy.md): before, the agent
/// checked again only at its next interval (red team, issue 75). The agent's clock is a
/// manual one: nothing sleeps.
@Suite struct DeviceAgentDeferralTests {
    @Test func aRequestedCheckThatEndsDeferredMovesTheNextCheckToTheDeferralsEnd() async throws {
        let device = try DeviceFixture()
        try await device.installAndCommit(["1.0.0"])
        let manifestReads = Observed(0)
        device.faults.add(.custom { _ in manifestReads.update { $0 += 1 } }, path: "/stable/manifest.json")
        let engine = try DeviceEngine.open(device.layout, options: .init(logger: .quiet))
        let clock = ManualClock()
        let interval = Duration.seconds(3600)
        let agent = DeviceAgent(engine, bridge: DeviceAgentServiceTests.NoBridge(), checkEvery: interval, clock: MonotonicClock(clock))
        let control = AgentControl(agent)
        let host = DeviceHost(agent)
        let running = Task { try await host.run() }
        _ = try await host.startedUp()
        // The loop waits for its first check, an interval (± 10 %) away.
        try await clock.waitForSleeper()

        // The page holds downloads for 5 minutes, then asks for a check: deferred until then.
        _ = try await control.holdDownloads(lease: "page-k3x9", for: .seconds(300), version: "1.0.0")
        try device.publish("1.1.0")
        let held = try await agent.checkForUpdates()
        #expect(held.result == .deferred, "\(held)")
        let until = try #require(held.deferredUntil, "\(held)")
        #expect(until.timeIntervalSince(engine.now()) <= 300, "\(until)")
        let reads = manifestReads.value
        #expect(reads > 0, "the requested check read the manifest")

        // The hold's 5 minutes and the device's share (under a tenth of the interval) pass on
        // the agent's clock, well short of the 54 minutes the interval waits at least: the
        // agent checks again.
        try await clock.waitForSleeper()
        await clock.advance(by: .seconds(300) + interval / 10 + .seconds(1))
        try await manifestReads.wait(for: "the agent's own check once the hold has ended", timeout: .seconds(60)) { $0 > reads }
        await host.shutDown()
        try await running.value
    }
}

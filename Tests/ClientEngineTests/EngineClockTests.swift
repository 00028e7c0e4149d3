import ClientEngine
import ClientFoundation
import ClientUpdater
import Foundation
import TestSupport
import Testing

/// The engine's options carry the device's one monotonic clock (issue 74): the agent a host
/// makes with the public initializer runs its periodic checks, its apply driver and its page
/// problems on it, so a manual clock given to `DeviceEngine.open` drives the whole agent and
/// nothing sleeps in real time (docs/concurrency.md#the-clock-seam).
@Suite struct EngineClockTests {
    @Test func theAgentsPeriodicCheckRunsOnTheEnginesClock() async throws {
        let device = try DeviceFixture()
        try await device.installAndCommit(["1.0.0"])
        try device.publish("1.1.0")
        let manifestReads = Observed(0)
        device.faults.add(.custom { _ in manifestReads.update { $0 += 1 } }, path: "/stable/manifest.json")
        let clock = ManualClock()
        var options = DeviceEngine.Options(logger: .quiet)
        options.clock = MonotonicClock(clock)
        let engine = try DeviceEngine.open(root: device.layout.root, options: options)
        let interval = Duration.seconds(3600)
        // The public initializer: no clock of its own, the engine's.
        let agent = DeviceAgent(engine, bridge: DeviceAgentServiceTests.NoBridge(), checkEvery: interval)
        let host = DeviceHost(agent)
        let running = Task { try await host.run() }
        _ = try await host.startedUp()
        // The apply driver, the page's problems and the check loop all wait on the manual clock.
        try await clock.waitForSleepers(3)
        let deviceID = try DeviceIdFile.readOrCreate(device.layout).text
        let first = CheckSchedule(every: interval, device: deviceID).delay(before: 0)
        #expect(first >= interval * 0.9 && first <= interval * 1.1, "\(first)")

        // A second short of the first check: nothing is read.
        await clock.advance(by: first - .seconds(1))
        #expect(manifestReads.value == 0, "no check before the interval has passed on the engine's clock")

        // Past it: the agent checks, though hardly any real time has passed.
        await clock.advance(by: .seconds(2))
        try await manifestReads.wait(for: "the agent's periodic check", timeout: .seconds(60)) { $0 > 0 }
        await host.shutDown()
        try await running.value
    }
}

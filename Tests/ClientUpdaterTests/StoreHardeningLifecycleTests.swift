import ClientFoundation
import ClientUpdater
import Foundation
import TestSupport
import Testing

/// Issue 10 in the library: the retry list forgets deleted versions; a trial's owner is
/// identified by pid *and* start time.
@Suite struct StoreHardeningLifecycleTests {
    @Test func retentionPrunesDeletedVersionsFromTheRetryList() async throws {
        let rig = try LifecycleRig(keep: 1, timeout: 10)
        rig.channel.publish("1.0.0")
        try await rig.makeUpdater().checkForUpdates()
        try await rig.makeUpdater().reload()
        #expect(try await rig.makeUpdater().startupDidComplete().lastKnownGood == "1.0.0")

        rig.channel.publish("1.1.0")
        try await rig.makeUpdater().checkForUpdates()
        try await rig.makeUpdater().reload()
        rig.advanceClocks(10)
        #expect(try await rig.makeUpdater().startupDidComplete().retry == ["1.1.0"])

        rig.channel.publish("1.2.0")
        try await rig.makeUpdater().checkForUpdates()
        try await rig.makeUpdater().reload()
        let committed = try await rig.makeUpdater().startupDidComplete()
        #expect(committed.lastKnownGood == "1.2.0" && committed.removed.contains("1.1.0"), "\(committed)")
        #expect(committed.retry.isEmpty && rig.state.retry.isEmpty, "\(rig.state)")
    }

    @Test func withoutSeedOrLastKnownGoodAFailedVersionKeepsRunning() {
        var watchdog = Watchdog(timeout: .seconds(10))
        watchdog.hasSeed = false
        var state = DeviceState()
        _ = watchdog.activate("1.0.0", state: &state, now: .zero, trial: .detached(at: Date()))
        let first = watchdog.timerFired(state: &state, now: .seconds(10), available: ["1.0.0"])
        #expect(state.current == "1.0.0" && state.retry == ["1.0.0"] && state.trial == nil, "\(state)")
        #expect(!first.contains { $0.isReload })
        #expect(first.contains(.report(.failed(version: "1.0.0", reason: .timedOut, blacklisted: false, revertedTo: .installed("1.0.0")))))
        // A manual rollback has nothing to go back to: refused before anything changes.
        #expect(!watchdog.canRollBack(state: state, available: ["1.0.0"]))
        watchdog.hasSeed = true
        #expect(watchdog.canRollBack(state: state, available: ["1.0.0"]))
    }

    @Test func aLivePidWithAnotherStartTimeIsNotTheOwner() throws {
        let sleeper = Process()
        sleeper.executableURL = URL(fileURLWithPath: "/bin/sleep")
        sleeper.arguments = ["30"]
        try sleeper.runUnmasked()
        defer {
            sleeper.terminate()
            sleeper.waitUntilExit()
        }
        let pid = sleeper.processIdentifier
        let owner = TrialOwner(
            startedAt: Date(), pid: pid, session: "other", boot: nil,
            pidStart: TrialOwner.processStart(pid))
        var trial = DeviceState.Trial(version: "1.1.0", owner: owner)
        #expect(trial.pidStart != nil)
        #expect(TrialOwner.status(of: trial, session: "mine") == .otherProcess)
        trial.pidStart = (trial.pidStart ?? 0) + 1
        #expect(TrialOwner.status(of: trial, session: "mine") == .gone)
        // Without a start time, the deadline decides: an hour past it, nobody owns it.
        trial.pidStart = nil
        let instant = BootInstant.now()
        #expect(TrialOwner.status(of: trial, session: "mine", now: Date(), instant: instant, timeout: .seconds(10)) == .otherProcess)
        #expect(TrialOwner.status(of: trial, session: "mine", now: Date().addingTimeInterval(3600), instant: instant, timeout: .seconds(10)) == .gone)
    }
}

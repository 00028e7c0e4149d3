import ClientFoundation
import ClientShim
import ClientUpdater
import Foundation
import TestSupport
import Testing

/// The library API end to end on a real root: start-up, checks, switches, the watchdog
/// timer on a manual clock (no sleeping), crash recovery, retention, shell updates.
@Suite struct UpdaterLifecycleTests {
    @Test func startServesTheSeedThenANewVersionIsStagedSwitchedAndCommitted() async throws {
        let rig = try LifecycleRig()
        let updater = rig.makeUpdater()
        let started = try await updater.start(bridge: rig.bridge, clock: MonotonicClock(rig.clock))
        #expect(started.current == .embedded && started.trial == nil)
        #expect(await rig.bridge.take() == ["base 0.9.0"])
        let page = try String(contentsOfFile: rig.layout.serving + "/0.9.0/index.html", encoding: .utf8)
        #expect(page.contains(Shim.marker), "the organized seed carries the shim")
        #expect(await updater.currentVersion == "0.9.0")

        let events = updater.events()
        rig.channel.publish("1.0.0")
        let check = try await updater.checkForUpdates()
        #expect(check.result == .installed && check.pending == "1.0.0")
        #expect(await updater.isUpdateAvailable)
        #expect(rig.serving().contains("1.0.0"), "organized when staged, so the switch is a pointer flip")
        #expect(
            await waitForEvent(events) {
                if case .updateAvailable = $0 { return true }
                return false
            } == .updateAvailable(version: "1.0.0"))

        let switched = try await updater.reload()
        #expect(switched.current == .installed("1.0.0") && switched.trial == "1.0.0" && switched.pending == nil)
        #expect(await rig.bridge.take() == ["base 1.0.0", "reload"])
        #expect(rig.state.trial?.pid == getpid())
        try await rig.clock.waitForSleeper()  // the trial's timer is armed, so its cancel below is seen

        let acked = try await updater.startupDidComplete()
        #expect(acked.lastKnownGood == "1.0.0" && acked.trial == nil)
        #expect(rig.clock.sleeperCount == 0, "the timer was cancelled")
        await updater.shutdown()
    }

    @Test func timeoutRetriesOnceThenBlacklists() async throws {
        let rig = try LifecycleRig(timeout: 10)
        let updater = rig.makeUpdater()
        try await updater.start(bridge: rig.bridge, clock: MonotonicClock(rig.clock))
        try await rig.publishAndSwitch("1.1.0", on: updater)
        try await updater.startupDidComplete()
        rig.channel.publish("1.2.0")
        try await updater.checkForUpdates()
        _ = await rig.bridge.take()
        let events = updater.events()

        try await updater.reload()
        try await rig.clock.waitForSleeper()
        await rig.clock.advance(by: .seconds(9))
        #expect(rig.state.trial?.version == "1.2.0", "still on trial before the deadline")
        await rig.clock.advance(by: .seconds(1))
        let first = await waitForEvent(events, isFailure)
        #expect(first == .watchdog(.failed(version: "1.2.0", reason: .timedOut, blacklisted: false, revertedTo: .installed("1.1.0"))))
        var state = rig.state
        #expect(state.current == "1.1.0" && state.retry == ["1.2.0"] && state.blacklist.isEmpty && state.trial == nil)
        #expect(await rig.bridge.take() == ["base 1.2.0", "reload", "base 1.1.0", "reload"])

        // The next check offers the version on the retry list again.
        let again = try await updater.checkForUpdates()
        #expect(again.pending == "1.2.0")
        try await updater.reload()
        try await rig.clock.waitForSleeper()
        await rig.clock.advance(by: .seconds(10))
        let second = await waitForEvent(events, isFailure)
        #expect(second == .watchdog(.failed(version: "1.2.0", reason: .timedOut, blacklisted: true, revertedTo: .installed("1.1.0"))))
        state = rig.state
        #expect(state.current == "1.1.0" && state.retry.isEmpty && state.blacklist == ["1.2.0"] && state.lastKnownGood == "1.1.0")
        // Blacklisted: never offered again.
        #expect(try await updater.checkForUpdates().pending == nil)
        await updater.shutdown()
    }

    /// The host's page died before it acknowledged (issue 28): the trial fails at once,
    /// with the clock never advanced, and the bridge is pointed back at the good version;
    /// the committed version's page dying changes nothing.
    @Test func aPageThatDiesOnTrialRollsBackAtOnce() async throws {
        let rig = try LifecycleRig(timeout: 10)
        let updater = rig.makeUpdater()
        try await updater.start(bridge: rig.bridge, clock: MonotonicClock(rig.clock))
        try await rig.publishAndSwitch("1.0.0", on: updater)
        try await updater.startupDidComplete()
        let kept = try await updater.pageCrashed(version: "1.0.0")
        #expect(kept.failed == nil && kept.current == .installed("1.0.0") && kept.lastKnownGood == "1.0.0")
        try await rig.publishAndSwitch("1.1.0", on: updater)
        try await rig.clock.waitForSleeper()  // the trial's timer is armed, so its cancel below is seen
        _ = await rig.bridge.take()

        let report = try await updater.pageCrashed(version: "1.1.0")
        #expect(report.failed == "1.1.0" && report.current == .installed("1.0.0") && report.retry == ["1.1.0"])
        let died = WatchdogEvent.failed(version: "1.1.0", reason: .pageCrashed, blacklisted: false, revertedTo: .installed("1.0.0"))
        #expect(report.events == [died.message])
        #expect(await rig.bridge.take() == ["base 1.0.0", "reload"])
        #expect(rig.state.trial == nil && rig.clock.sleeperCount == 0, "the trial's timer was cancelled")
        await updater.shutdown()
    }

    @Test func aTrialLeftByADeadUpdaterFailsAtTheNextStart() async throws {
        let rig = try LifecycleRig()
        do {
            let first = rig.makeUpdater()
            try await first.start(bridge: rig.bridge, clock: MonotonicClock(rig.clock))
            try await rig.publishAndSwitch("1.0.0", on: first)
            try await first.startupDidComplete()
            try await rig.publishAndSwitch("1.1.0", on: first)
            #expect(rig.state.trial?.version == "1.1.0")
            // The process "dies": no shutdown.
        }
        let next = rig.makeUpdater()
        let report = try await next.start(bridge: rig.bridge, clock: MonotonicClock(ManualClock()))
        #expect(report.current == .installed("1.0.0"))
        #expect(report.retry == ["1.1.0"] && report.trial == nil)
        let died = WatchdogEvent.failed(version: "1.1.0", reason: .processDied, blacklisted: false, revertedTo: .installed("1.0.0"))
        #expect(report.events == [died.message])
        await next.shutdown()
    }

    @Test func gracefulShutdownMidTrialCountsNoFailure() async throws {
        let rig = try LifecycleRig()
        let updater = rig.makeUpdater()
        try await updater.start(bridge: rig.bridge, clock: MonotonicClock(rig.clock))
        try await rig.publishAndSwitch("1.0.0", on: updater)
        await updater.shutdown()
        #expect(rig.state.trial == nil && rig.state.retry.isEmpty && rig.state.current == "1.0.0")
        let next = rig.makeUpdater()
        let report = try await next.start(bridge: rig.bridge, clock: MonotonicClock(ManualClock()))
        #expect(report.current == .installed("1.0.0") && report.trial == "1.0.0", "a fresh trial at the next start")
        await next.shutdown()
    }

    @Test func retentionAfterTheFourthCommitRemovesTheOldestAndItsServingFolder() async throws {
        let rig = try LifecycleRig(keep: 3)
        let updater = rig.makeUpdater()
        try await updater.start(bridge: rig.bridge, clock: MonotonicClock(rig.clock))
        var last: LifecycleReport?
        for id in ["1.0.0", "1.1.0", "1.2.0", "1.3.0"] {
            try await rig.publishAndSwitch(id, on: updater)
            last = try await updater.startupDidComplete()
        }
        #expect(last?.removed == ["1.0.0"])
        #expect(rig.clients() == ["1.1.0", "1.2.0", "1.3.0"])
        #expect(rig.serving() == ["0.9.0", "1.1.0", "1.2.0", "1.3.0"], "serving folders follow; the seed's stays")
        await updater.shutdown()
    }

    @Test func aNewEmbeddedSeedDropsDownloadedVersions() async throws {
        let rig = try LifecycleRig()
        let updater = rig.makeUpdater()
        try await updater.start(bridge: rig.bridge, clock: MonotonicClock(rig.clock))
        try await rig.publishAndSwitch("1.0.0", on: updater)
        try await updater.startupDidComplete()
        await updater.shutdown()

        try rig.channel.replaceSeed("2.0.0")
        let next = rig.makeUpdater()
        let report = try await next.start(bridge: rig.bridge, clock: MonotonicClock(ManualClock()))
        #expect(report.shellUpdateReset && report.current == .embedded && report.lastKnownGood == nil)
        #expect(rig.clients().isEmpty && rig.channel.removed == ["1.0.0"])
        #expect(rig.serving() == ["2.0.0"])
        #expect(rig.state.lastSeenEmbeddedVersion == "2.0.0" && rig.state.memory(FakeChannel.Memory.self)?.highestAccepted == "1.0.0")
        await next.shutdown()
    }

    @Test func switchesAndAcknowledgementsNeverOverlapOnTheBridge() async throws {
        let rig = try LifecycleRig()
        let updater = rig.makeUpdater()
        try await updater.start(bridge: rig.bridge, clock: MonotonicClock(rig.clock))
        for id in ["1.0.0", "1.1.0", "1.2.0"] {
            rig.channel.publish(id)
            try await updater.checkForUpdates()
        }
        _ = await rig.bridge.take()
        // Some of these race to a state where they have nothing to do (a rollback with
        // nothing to go back to): those refusals are UpdaterErrors; anything else fails.
        let outcomes = await withTaskGroup(of: (succeeded: Bool, unexpected: String?).self) { group in
            for i in 0..<12 {
                group.addTask {
                    do {
                        switch i % 3 {
                        case 0: _ = try await updater.reload()
                        case 1: _ = try await updater.startupDidComplete()
                        default: _ = try await updater.rollback()
                        }
                        return (true, nil)
                    } catch is UpdaterError {
                        return (false, nil)
                    } catch {
                        return (false, "\(error)")
                    }
                }
            }
            var all: [(succeeded: Bool, unexpected: String?)] = []
            for await outcome in group { all.append(outcome) }
            return all
        }
        #expect(outcomes.compactMap(\.unexpected).isEmpty)
        #expect(outcomes.contains { $0.succeeded }, "some operations went through")
        #expect(await !rig.bridge.take().isEmpty, "the switches reached the bridge")
        #expect(await rig.bridge.maxInFlight == 1)
        await updater.shutdown()
    }

    @Test func oneShotCommandsTimeTrialsOnTheBootClock() async throws {
        let rig = try LifecycleRig(timeout: 10)
        let cli = rig.makeUpdater()
        rig.channel.publish("1.0.0")
        try await cli.checkForUpdates()
        let switched = try await cli.reload()
        #expect(switched.trial == "1.0.0" && rig.state.trial?.pid == nil)
        // A wall clock set a year ahead between the two commands fails no trial: 4 s of
        // its 10 passed on the boot clock.
        rig.jumpWallClock(365 * 86_400)
        rig.advanceClocks(4)
        #expect(try await rig.makeUpdater().startupDidComplete().lastKnownGood == "1.0.0")

        rig.channel.publish("1.1.0")
        try await rig.makeUpdater().checkForUpdates()
        try await rig.makeUpdater().reload()
        rig.advanceClocks(10)
        let late = try await rig.makeUpdater().startupDidComplete()
        #expect(late.current == .installed("1.0.0") && late.retry == ["1.1.0"])
        let timedOut = WatchdogEvent.failed(version: "1.1.0", reason: .timedOut, blacklisted: false, revertedTo: .installed("1.0.0"))
        #expect(late.events.first == timedOut.message)
    }

    @Test func rollbackBlacklistsAndGcKeepsProtectedVersions() async throws {
        let rig = try LifecycleRig(keep: 1)
        let cli = rig.makeUpdater()
        try await rig.publishAndSwitch("1.0.0", on: cli)
        try await cli.startupDidComplete()
        try await rig.publishAndSwitch("1.1.0", on: cli)
        let rolled = try await cli.rollback()
        #expect(rolled.current == .installed("1.0.0") && rolled.blacklist == ["1.1.0"])
        #expect(rolled.servingDirectory == rig.layout.serving + "/1.0.0")
        let gc = try await cli.collectGarbage()
        #expect(gc.removed == ["1.1.0"] && rig.clients() == ["1.0.0"])
        await #expect(throws: UpdaterError.self) { try await cli.reload() }
    }

    @Test func aColdStartAfterABlacklistRunsLastKnownGoodNotTheSeed() async throws {
        let rig = try LifecycleRig()
        rig.channel.meteorSelection = true
        let cli = rig.makeUpdater()
        try await rig.publishAndSwitch("1.0.0", on: cli)
        try await cli.startupDidComplete()
        try await rig.publishAndSwitch("1.1.0", on: cli)
        try await cli.rollback()
        let next = rig.makeUpdater()
        let report = try await next.start(bridge: rig.bridge, clock: MonotonicClock(ManualClock()))
        #expect(report.current == .installed("1.0.0") && report.trial == nil, "the seed rule finds nothing: last known good, not the seed")
        await next.shutdown()
    }
}

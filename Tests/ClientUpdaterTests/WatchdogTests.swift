import ClientFoundation
import Foundation
import TestSupport
import Testing

@testable import ClientUpdater

/// Every transition of the startup watchdog, driven by explicit monotonic times.
@Suite struct WatchdogTests {
    let t0 = Date(timeIntervalSince1970: 1_700_000_000)
    var owner: TrialOwner { TrialOwner(startedAt: t0, pid: 4242, session: "s1", boot: "b1") }
    let available: Set<String> = ["1.0.0", "1.1.0", "1.2.0"]
    /// The boot clock when the trials here start, and `seconds` later in the same boot.
    let i0 = BootInstant(bootID: "b1", uptime: .seconds(1_000))
    func later(_ seconds: Int64, boot: String = "b1") -> BootInstant { BootInstant(bootID: boot, uptime: .seconds(1_000 + seconds)) }

    func state(current: String? = nil, lkg: String? = nil, pending: String? = nil) -> DeviceState {
        var s = DeviceState()
        s.current = current
        s.lastKnownGood = lkg
        s.pending = pending
        return s
    }

    @Test func activatingANewVersionStartsATrialAndArmsTheTimer() {
        var w = Watchdog(timeout: .seconds(10))
        var s = state(current: "1.0.0", lkg: "1.0.0", pending: "1.1.0")
        let actions = w.activate("1.1.0", state: &s, now: .seconds(5), trial: owner)
        #expect(actions == [.persist, .armTimer(deadline: .seconds(15)), .report(.trialStarted(version: "1.1.0"))])
        #expect(w.phase == .trial(version: "1.1.0", deadline: .seconds(15)))
        #expect(s.current == "1.1.0" && s.pending == nil)
        #expect(s.trial == DeviceState.Trial(version: "1.1.0", startedAt: t0, pid: 4242, session: "s1", boot: "b1"))
    }

    @Test func activatingLastKnownGoodOrTheSeedStartsNoTrial() {
        var w = Watchdog(timeout: .seconds(10))
        var s = state(current: "1.1.0", lkg: "1.0.0")
        _ = w.activate("1.1.0", state: &s, now: .zero, trial: owner)
        #expect(w.activate("1.0.0", state: &s, now: .seconds(1), trial: owner) == [.cancelTimer, .persist])
        #expect(w.phase == .idle && s.trial == nil && s.current == "1.0.0")
        #expect(w.activate(nil, state: &s, now: .seconds(2), trial: owner) == [.persist])
        #expect(s.current == nil && s.trial == nil)
    }

    @Test func firstInstallWithoutLastKnownGoodIsATrial() {
        var w = Watchdog(timeout: .seconds(3))
        var s = state()
        _ = w.activate("1.0.0", state: &s, now: .zero, trial: owner)
        #expect(w.phase == .trial(version: "1.0.0", deadline: .seconds(3)))
    }

    @Test func startupCompleteCommitsAndAsksForRetention() {
        var w = Watchdog(timeout: .seconds(10))
        var s = state(current: "1.0.0", lkg: "1.0.0")
        s.retry = ["1.1.0"]
        _ = w.activate("1.1.0", state: &s, now: .zero, trial: owner)
        let actions = w.startupDidComplete(state: &s, now: .seconds(9), available: available)
        #expect(actions == [.cancelTimer, .persist, .runRetention, .report(.committed(version: "1.1.0"))])
        #expect(s.lastKnownGood == "1.1.0" && s.current == "1.1.0" && s.trial == nil)
        #expect(s.retry.isEmpty, "a committed version leaves the retry list")
        #expect(w.phase == .idle)
    }

    @Test func startupCompleteWithoutTrialChangesNothing() {
        var w = Watchdog(timeout: .seconds(10))
        var s = state(current: "1.0.0", lkg: "1.0.0")
        let before = s
        #expect(w.startupDidComplete(state: &s, now: .seconds(1), available: available) == [.report(.noTrial(current: .installed("1.0.0")))])
        #expect(s == before)
    }

    /// After a switch back to the seed (Meteor scenarios 36–41) the seed is what started:
    /// it becomes the last known good version (nil) and retention may drop downloads.
    @Test func startupCompleteOfTheSeedMakesItTheLastKnownGood() {
        var w = Watchdog(timeout: .seconds(10))
        w.hasSeed = true
        var s = state(current: nil, lkg: "1.0.0")
        #expect(
            w.startupDidComplete(state: &s, now: .seconds(1), available: available)
                == [.persist, .runRetention, .report(.noTrial(current: .embedded))])
        #expect(s.lastKnownGood == nil && s.current == nil)
    }

    @Test func startupCompleteAtTheDeadlineIsTooLate() {
        var w = Watchdog(timeout: .seconds(10))
        var s = state(current: "1.0.0", lkg: "1.0.0")
        _ = w.activate("1.1.0", state: &s, now: .zero, trial: owner)
        let actions = w.startupDidComplete(state: &s, now: .seconds(10), available: available)
        #expect(actions.contains(.report(.failed(version: "1.1.0", reason: .timedOut, blacklisted: false, revertedTo: .installed("1.0.0")))))
        #expect(s.lastKnownGood == "1.0.0" && s.current == "1.0.0")
    }

    @Test func earlyTimerRearms() {
        var w = Watchdog(timeout: .seconds(10))
        var s = state(current: "1.0.0", lkg: "1.0.0")
        _ = w.activate("1.1.0", state: &s, now: .zero, trial: owner)
        #expect(w.timerFired(state: &s, now: .seconds(9), available: available) == [.armTimer(deadline: .seconds(10))])
        #expect(s.trial != nil)
    }

    @Test func firstTimeoutRetriesSecondBlacklists() {
        var w = Watchdog(timeout: .seconds(10))
        var s = state(current: "1.1.0", lkg: "1.1.0")
        _ = w.activate("1.2.0", state: &s, now: .zero, trial: owner)
        let first = w.timerFired(state: &s, now: .seconds(10), available: available)
        #expect(
            first == [
                .cancelTimer, .persist, .reload(to: .installed("1.1.0")),
                .report(.failed(version: "1.2.0", reason: .timedOut, blacklisted: false, revertedTo: .installed("1.1.0"))),
            ])
        #expect(s.retry == ["1.2.0"] && s.blacklist.isEmpty && s.current == "1.1.0" && s.trial == nil)
        #expect(w.phase == .idle)

        _ = w.activate("1.2.0", state: &s, now: .seconds(20), trial: owner)
        let second = w.timerFired(state: &s, now: .seconds(30), available: available)
        #expect(second.contains(.report(.failed(version: "1.2.0", reason: .timedOut, blacklisted: true, revertedTo: .installed("1.1.0")))))
        #expect(s.retry.isEmpty && s.blacklist == ["1.2.0"] && s.current == "1.1.0")
        #expect(s.lastKnownGood == "1.1.0")
    }

    @Test func failureWithoutLastKnownGoodRevertsToTheSeed() {
        var w = Watchdog(timeout: .seconds(1))
        var s = state()
        _ = w.activate("1.0.0", state: &s, now: .zero, trial: owner)
        let actions = w.timerFired(state: &s, now: .seconds(1), available: available)
        #expect(actions.contains(.reload(to: .embedded)))
        #expect(s.current == nil && s.retry == ["1.0.0"])
    }

    @Test func failureRevertsToTheSeedWhenLastKnownGoodIsGone() {
        var w = Watchdog(timeout: .seconds(1))
        var s = state(current: "1.0.0", lkg: "1.0.0")
        _ = w.activate("1.1.0", state: &s, now: .zero, trial: owner)
        let actions = w.timerFired(state: &s, now: .seconds(2), available: ["1.1.0"])
        #expect(actions.contains(.reload(to: .embedded)))
        #expect(s.current == nil)
    }

    @Test func timerForATrialResolvedElsewhereDoesNothing() {
        var w = Watchdog(timeout: .seconds(10))
        var s = state(current: "1.0.0", lkg: "1.0.0")
        _ = w.activate("1.1.0", state: &s, now: .zero, trial: owner)
        // `clientctl ack` in another process committed it.
        s.trial = nil
        s.lastKnownGood = "1.1.0"
        let before = s
        #expect(w.timerFired(state: &s, now: .seconds(11), available: available).isEmpty)
        #expect(s == before && w.phase == .idle)
        #expect(w.timerFired(state: &s, now: .seconds(12), available: available).isEmpty)
    }

    @Test func pendingIsKeptUnlessItIsTheRevertTarget() {
        var w = Watchdog(timeout: .seconds(1))
        var s = state(current: "1.0.0", lkg: "1.0.0")
        _ = w.activate("1.1.0", state: &s, now: .zero, trial: owner)
        s.pending = "1.2.0"
        _ = w.timerFired(state: &s, now: .seconds(1), available: available)
        #expect(s.pending == "1.2.0")
    }

    // MARK: a page that died (issue 28)

    /// The trial's page died before it acknowledged: the trial fails at once, by the
    /// timeout's rule (retry list, then blacklist), long before its deadline.
    @Test func aPageThatDiesBeforeAcknowledgingFailsItsTrialAtOnce() {
        var w = Watchdog(timeout: .seconds(10))
        var s = state(current: "1.0.0", lkg: "1.0.0")
        _ = w.activate("1.1.0", state: &s, now: .zero, trial: owner)
        let actions = w.pageCrashed(version: "1.1.0", state: &s, now: .seconds(1), available: available)
        #expect(
            actions == [
                .cancelTimer, .persist, .reload(to: .installed("1.0.0")),
                .report(.failed(version: "1.1.0", reason: .pageCrashed, blacklisted: false, revertedTo: .installed("1.0.0"))),
            ])
        #expect(s.current == "1.0.0" && s.retry == ["1.1.0"] && s.trial == nil && w.phase == .idle)
        #expect(w.timerFired(state: &s, now: .seconds(10), available: available).isEmpty, "the old deadline fails nothing more")

        _ = w.activate("1.1.0", state: &s, now: .seconds(20), trial: owner)
        let second = w.pageCrashed(version: "1.1.0", state: &s, now: .seconds(21), available: available)
        #expect(second.contains(.report(.failed(version: "1.1.0", reason: .pageCrashed, blacklisted: true, revertedTo: .installed("1.0.0")))))
        #expect(s.blacklist == ["1.1.0"] && s.retry.isEmpty && s.current == "1.0.0")
    }

    /// A committed version's page, an old page of another version, or a trial resolved by
    /// another process: nothing changes (the host reloads the page itself).
    @Test func aPageThatDiesOutsideItsTrialChangesNothing() {
        var w = Watchdog(timeout: .seconds(10))
        var s = state(current: "1.0.0", lkg: "1.0.0")
        var before = s
        #expect(w.pageCrashed(version: "1.0.0", state: &s, now: .seconds(1), available: available).isEmpty)
        #expect(s == before)

        _ = w.activate("1.1.0", state: &s, now: .seconds(2), trial: owner)
        before = s
        #expect(w.pageCrashed(version: "1.0.0", state: &s, now: .seconds(3), available: available).isEmpty, "the old page of 1.0.0")
        #expect(s == before && w.phase == .trial(version: "1.1.0", deadline: .seconds(12)))

        _ = w.startupDidComplete(state: &s, now: .seconds(4), available: available)
        before = s
        #expect(w.pageCrashed(version: "1.1.0", state: &s, now: .seconds(5), available: available).isEmpty, "committed already")
        #expect(s == before && s.lastKnownGood == "1.1.0")

        _ = w.activate("1.2.0", state: &s, now: .seconds(6), trial: owner)
        s.trial = nil  // `clientctl ack` in another process committed it
        s.lastKnownGood = "1.2.0"
        before = s
        #expect(w.pageCrashed(version: "1.2.0", state: &s, now: .seconds(7), available: available).isEmpty)
        #expect(s == before && w.phase == .idle)
    }

    /// At or after the deadline the trial had timed out already: the failure says so.
    @Test func aPageThatDiesAtItsDeadlineTimedOut() {
        var w = Watchdog(timeout: .seconds(10))
        var s = state(current: "1.0.0", lkg: "1.0.0")
        _ = w.activate("1.1.0", state: &s, now: .zero, trial: owner)
        let actions = w.pageCrashed(version: "1.1.0", state: &s, now: .seconds(10), available: available)
        #expect(actions.contains(.report(.failed(version: "1.1.0", reason: .timedOut, blacklisted: false, revertedTo: .installed("1.0.0")))))
    }

    // MARK: start-up recovery

    func trialState(owner: TrialOwner) -> DeviceState {
        var s = state(current: "1.1.0", lkg: "1.0.0")
        s.trial = DeviceState.Trial(version: "1.1.0", owner: owner)
        return s
    }

    @Test func aTrialWhoseProcessDiedFails() {
        var w = Watchdog(timeout: .seconds(10))
        var s = trialState(owner: owner)
        let actions = w.recover(state: &s, now: .zero, wallClock: t0.addingTimeInterval(1), instant: later(1), owner: .gone, available: available)
        #expect(
            actions == [
                .persist, .reload(to: .installed("1.0.0")),
                .report(.failed(version: "1.1.0", reason: .processDied, blacklisted: false, revertedTo: .installed("1.0.0"))),
            ])
        #expect(s.retry == ["1.1.0"] && s.current == "1.0.0" && s.trial == nil)
    }

    @Test func aSecondCrashBlacklists() {
        var w = Watchdog(timeout: .seconds(10))
        var s = trialState(owner: owner)
        s.retry = ["1.1.0"]
        _ = w.recover(state: &s, now: .zero, wallClock: t0, instant: i0, owner: .gone, available: available)
        #expect(s.blacklist == ["1.1.0"] && s.retry.isEmpty)
    }

    @Test func aTrialOfAnotherLiveProcessIsLeftAlone() {
        var w = Watchdog(timeout: .seconds(10))
        var s = trialState(owner: owner)
        let before = s
        #expect(
            w.recover(state: &s, now: .zero, wallClock: t0.addingTimeInterval(100), instant: later(100), owner: .otherProcess, available: available)
                .isEmpty)
        #expect(s == before && w.phase == .idle)
    }

    @Test func aDetachedTrialIsAdoptedWithTheTimeThatRemains() {
        var w = Watchdog(timeout: .seconds(10))
        var s = trialState(owner: .detached(at: t0, instant: i0))
        let actions = w.recover(
            state: &s, now: .seconds(100), wallClock: t0.addingTimeInterval(4), instant: later(4), owner: .none, available: available)
        #expect(actions == [.armTimer(deadline: .seconds(106))])
        #expect(w.phase == .trial(version: "1.1.0", deadline: .seconds(106)))
        let done = w.startupDidComplete(state: &s, now: .seconds(105), available: available)
        #expect(done.contains(.report(.committed(version: "1.1.0"))))
    }

    @Test func anExpiredDetachedTrialFails() {
        var w = Watchdog(timeout: .seconds(10))
        var s = trialState(owner: .detached(at: t0, instant: i0))
        let actions = w.recover(state: &s, now: .zero, wallClock: t0.addingTimeInterval(10), instant: later(10), owner: .none, available: available)
        #expect(actions.contains(.report(.failed(version: "1.1.0", reason: .timedOut, blacklisted: false, revertedTo: .installed("1.0.0")))))
    }

    /// A trial started by a one-shot command is timed on the boot clock by the next one:
    /// a wall clock set a year ahead (or back) between the two neither fails it early nor
    /// lets it run long; only across a reboot (another boot id) does the wall clock decide.
    @Test(arguments: [365 * 86_400.0, -365 * 86_400.0])
    func aDetachedTrialIsTimedOnTheBootClockWhateverTheWallClockDoes(_ jump: TimeInterval) {
        var w = Watchdog(timeout: .seconds(10))
        var s = trialState(owner: .detached(at: t0, instant: i0))
        #expect(s.trial?.startedUptimeMs == 1_000_000)
        let adopted = w.recover(
            state: &s, now: .seconds(100), wallClock: t0.addingTimeInterval(4 + jump), instant: later(4), owner: .none, available: available)
        #expect(adopted == [.armTimer(deadline: .seconds(106))], "4 s of the boot clock ran, 6 remain")
        var late = trialState(owner: .detached(at: t0, instant: i0))
        var w2 = Watchdog(timeout: .seconds(10))
        let failed = w2.recover(
            state: &late, now: .zero, wallClock: t0.addingTimeInterval(-86_400), instant: later(10), owner: .none,
            available: available)
        #expect(failed.contains(.report(.failed(version: "1.1.0", reason: .timedOut, blacklisted: false, revertedTo: .installed("1.0.0")))))
        // After a reboot the boot clock started again: the wall clock is all there is.
        var rebooted = trialState(owner: .detached(at: t0, instant: i0))
        var w3 = Watchdog(timeout: .seconds(10))
        let afterBoot = w3.recover(
            state: &rebooted, now: .zero, wallClock: t0.addingTimeInterval(3), instant: later(-900, boot: "b2"), owner: .none,
            available: available)
        #expect(afterBoot == [.armTimer(deadline: .seconds(7))])
    }

    @Test func aStaleTrialOfAVersionThatIsNotCurrentIsDropped() {
        var w = Watchdog(timeout: .seconds(10))
        var s = trialState(owner: owner)
        s.current = "1.0.0"
        #expect(w.recover(state: &s, now: .zero, wallClock: t0, instant: i0, owner: .gone, available: available) == [.persist])
        #expect(s.trial == nil && s.retry.isEmpty)
    }

    @Test func recoverWithoutTrialIsIdle() {
        var w = Watchdog(timeout: .seconds(10))
        var s = state(current: "1.0.0", lkg: "1.0.0")
        #expect(w.recover(state: &s, now: .zero, wallClock: t0, instant: i0, owner: .none, available: available).isEmpty)
    }

    // MARK: rollback and shutdown

    @Test func rollbackBlacklistsAtOnceAndReverts() {
        var w = Watchdog(timeout: .seconds(10))
        var s = state(current: "1.0.0", lkg: "1.0.0")
        _ = w.activate("1.1.0", state: &s, now: .zero, trial: owner)
        s.retry = ["1.1.0"]
        let actions = w.rollback(state: &s, available: available)
        #expect(
            actions == [
                .cancelTimer, .persist, .reload(to: .installed("1.0.0")),
                .report(.failed(version: "1.1.0", reason: .rolledBack, blacklisted: true, revertedTo: .installed("1.0.0"))),
            ])
        #expect(s.blacklist == ["1.1.0"] && s.retry.isEmpty && s.current == "1.0.0" && s.trial == nil)
    }

    @Test func rollingBackTheLastKnownGoodGoesToTheSeed() {
        var w = Watchdog(timeout: .seconds(10))
        var s = state(current: "1.0.0", lkg: "1.0.0")
        #expect(w.rollback(state: &s, available: available).contains(.reload(to: .embedded)))
        #expect(s.lastKnownGood == nil && s.current == nil && s.blacklist == ["1.0.0"])
    }

    @Test func rollbackOnTheSeedIsANoOp() {
        var w = Watchdog(timeout: .seconds(10))
        var s = state()
        #expect(w.rollback(state: &s, available: available) == [.report(.nothingToRollBack)])
        #expect(s == state())
    }

    @Test func gracefulShutdownDropsTheTrialWithoutAFailure() {
        var w = Watchdog(timeout: .seconds(10))
        var s = state(current: "1.0.0", lkg: "1.0.0")
        _ = w.activate("1.1.0", state: &s, now: .zero, trial: owner)
        #expect(w.shutdown(state: &s) == [.cancelTimer, .persist])
        #expect(s.trial == nil && s.current == "1.1.0" && s.retry.isEmpty)
        #expect(w.shutdown(state: &s).isEmpty)
    }

    @Test func failureRuleMatchesMeteor() {
        var s = DeviceState()
        #expect(Watchdog.recordFailure(of: "a", in: &s) == false)
        #expect(s.retry == ["a"])
        #expect(Watchdog.recordFailure(of: "a", in: &s) == true)
        #expect(s.retry.isEmpty && s.blacklist == ["a"])
        #expect(Watchdog.recordFailure(of: "a", in: &s) == true)
        #expect(s.blacklist == ["a"], "never listed twice")
    }

    // MARK: the persisted owner

    @Test func ownerStatusFromTheSystem() throws {
        let me = TrialOwner.thisProcess(session: "mine", at: t0)
        let mine = DeviceState.Trial(version: "1", owner: me)
        #expect(TrialOwner.status(of: mine, session: "mine") == .thisProcess)
        #expect(TrialOwner.status(of: mine, session: "other") == .gone, "an earlier instance in this process")
        #expect(TrialOwner.status(of: DeviceState.Trial(version: "1", owner: .detached(at: t0)), session: "x") == .none)
        var parent = mine
        parent.pid = getppid()
        parent.pidStart = TrialOwner.processStart(getppid())  // the owner record is pid and start time
        parent.session = "p"
        #expect(TrialOwner.status(of: parent, session: "x") == .otherProcess)
        parent.boot = "another-boot"
        #expect(TrialOwner.status(of: parent, session: "x") == .gone)
        var dead = mine
        dead.pid = Int32.max - 1
        dead.session = "d"
        #expect(TrialOwner.status(of: dead, session: "x") == .gone)
    }

    @Test func watchdogClockSleepsOnTheInjectedClock() async throws {
        let manual = ManualClock()
        let clock = MonotonicClock(manual)
        #expect(clock.now == .zero)
        let woke = Task {
            try await clock.sleep(until: .seconds(5))
            return clock.now
        }
        try await manual.waitForSleeper()
        await manual.advance(by: .seconds(4))
        #expect(manual.sleeperCount == 1, "not due yet")
        await manual.advance(by: .seconds(1))
        #expect(try await woke.value == .seconds(5))
        let cancelled = Task { try await clock.sleep(until: .seconds(60)) }
        try await manual.waitForSleeper()
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
    }
}

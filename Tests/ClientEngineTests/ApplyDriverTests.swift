import ApplyPolicy
import ClientEngine
import ClientFoundation
import ClientUpdater
import DeviceSetup
import FleetReports
import Foundation
import StrictJSON
import Synchronization
import TestSupport
import Testing

@testable import ClientEngine

/// The apply driver on a real root: a release signed with an apply policy, installed from a
/// loopback feed and staged, then switched (or not) as the policy, the device's windows,
/// the page's leases, a trial and the injected clock say (docs/apply-policies.md). No test
/// sleeps: the clock moves only when the test moves it.
@Suite struct ApplyDriverTests {
    /// A wall clock and a monotonic clock that move only when told: ``advance(_:)`` moves
    /// both (time passes), ``jump(_:)`` only the wall clock (someone set it). The monotonic
    /// one is a manual clock the driver's timers sleep on.
    final class TestClock: Sendable {
        private let wall: Mutex<Date>
        let manual = ManualClock()
        init(_ start: Date) { wall = Mutex(start) }
        var now: @Sendable () -> Date { { self.wall.withLock { $0 } } }
        func advance(_ seconds: Int64) async {
            wall.withLock { $0 = $0.addingTimeInterval(TimeInterval(seconds)) }
            await manual.advance(by: .seconds(seconds))
        }
        func jump(_ seconds: TimeInterval) { wall.withLock { $0 = $0.addingTimeInterval(seconds) } }
    }

    /// Counts what the updater asks of the host; ``hold()`` makes the next switch wait in
    /// the host until ``open()`` (a switch in flight, for as long as a test needs).
    actor Bridge: HostBridge {
        var folders: [String] = []
        var reloads = 0
        private var held = false
        private var gate: CheckedContinuation<Void, Never>?
        private let (entered, enter) = AsyncStream<Void>.makeStream()

        func setServerBasePath(_ path: String) async throws {
            folders.append(path)
            guard held else { return }
            enter.yield()
            await withCheckedContinuation { gate = $0 }
        }
        func reload() async throws { reloads += 1 }
        func hold() { held = true }
        /// Returns once a switch waits in the host.
        func switchEntered() async {
            for await _ in entered { return }
        }
        func open() {
            held = false
            gate?.resume()
            gate = nil
        }
    }

    /// A device running 1.0.0 (committed), with 1.1.0 published under `apply` and staged by
    /// a check at the clock's time; the updater started with `bridge`.
    struct Staged {
        let device: DeviceFixture
        let updater: Updater
        let clock: TestClock
        let bridge: Bridge

        func driver(windows: [MaintenanceWindow] = []) -> ApplyDriver {
            ApplyDriver(updater: updater, windows: windows, now: clock.now, clock: MonotonicClock(clock.manual))
        }

        /// The fleet reports the root recorded, newest last.
        func reports(_ type: ReportKind) -> [FleetReport] {
            ReportJournal(layout: device.layout).recent().filter { $0.type == type }
        }

        var current: String? { StateStore.load(device.layout).current }
    }

    static let start = Date(timeIntervalSince1970: 1_795_000_000)  // 2026-11-18T…Z

    func staged(_ apply: JSONValue?, at start: Date = Self.start, version: String = "1.1.0") async throws -> Staged {
        let device = try DeviceFixture()
        device.config.reportURL = "http://127.0.0.1:9/"  // a journal, never delivered here
        try device.config.save(device.layout)
        try await device.installAndCommit(["1.0.0"])
        try device.publish(version) { object in
            if let apply { object["apply"] = apply }
        }
        let clock = TestClock(start)
        let bridge = Bridge()
        let updater = try device.updater(now: clock.now)
        try await updater.start(bridge: bridge)
        try await updater.checkForUpdates()
        #expect(StateStore.load(device.layout).pending == version, "the check staged \(version)")
        return Staged(device: device, updater: updater, clock: clock, bridge: bridge)
    }

    static func policy(_ pairs: (String, JSONValue)...) -> JSONValue { .object(JSONObject(pairs)) }

    @Test func idleSwitchesOnlyAfterTheQuietTimeSinceTheLastInput() async throws {
        let s = try await staged(Self.policy(("mode", .string("idle")), ("idleSeconds", .integer(300))))
        let driver = s.driver()
        await s.clock.advance(200)
        driver.noteInput()
        var step = await driver.step()
        #expect(step.decision == .wait(.idle(until: Self.start.addingTimeInterval(500))))
        #expect(step.switched == nil && s.current == "1.0.0")
        let status = try #require(ApplyStatus.read(s.device.layout), "the host's decision is on disk for `status`")
        #expect(status.version == "1.1.0" && status.line.contains("idle") && status.policy == "idle 300 s")
        await s.clock.advance(299)
        step = await driver.step()
        #expect(step.switched == nil, "299 s after the last input is not idle yet")
        await s.clock.advance(1)
        step = await driver.step()
        #expect(step.decision == .switchNow(trigger: .idle) && step.switched == "1.1.0")
        #expect(s.current == "1.1.0" && StateStore.load(s.device.layout).trial?.version == "1.1.0", "the switch starts a trial")
        #expect(await s.bridge.reloads == 1, "the host reloaded onto it")
        let switched = try #require(s.reports(.switched).last)
        #expect(switched.version == "1.1.0" && switched.from == "1.0.0" && switched.detail == "idle")
        #expect(switched.ms == 500_000, "staged at the check, switched 500 s later")
        #expect(ApplyStatus.read(s.device.layout) == nil, "nothing waits any more")
        // Never twice: a second step finds nothing staged.
        #expect(await driver.step().decision == nil)
        #expect(await s.bridge.reloads == 1)
    }

    @Test func aLeaseHoldsModeNowUntilItIsReleasedOrRunsOut() async throws {
        let s = try await staged(Self.policy(("mode", .string("now"))))
        let driver = s.driver()
        let until = driver.hold(lease: "page", for: .seconds(120))
        #expect(until == Self.start.addingTimeInterval(120))
        #expect(await driver.step().decision == .wait(.lease(until: until)))
        #expect(s.current == "1.0.0")
        // A lease is capped: asking for a day holds at most ApplyDriver.maxLease.
        #expect(driver.hold(lease: "page", for: .seconds(86_400)) == Self.start.addingTimeInterval(600))
        // A page posting lease after lease holds at most maxLeases of them.
        for n in 0..<1_000 { driver.hold(lease: "flood-\(n)", for: .seconds(60)) }
        #expect(driver.leaseCount == ApplyDriver.maxLeases)
        driver.releaseLeases()  // the page (or its web process) is gone
        let step = await driver.step()
        #expect(step.switched == "1.1.0" && step.decision == .switchNow(trigger: .now))
        #expect(s.reports(.switched).last?.detail == "now")
    }

    @Test func aLeaseThatIsNotRenewedRunsOutOnTheClock() async throws {
        let s = try await staged(Self.policy(("mode", .string("now"))))
        let driver = s.driver()
        driver.hold(lease: "page", for: .seconds(60))
        #expect(await driver.step().switched == nil)
        await s.clock.advance(60)
        #expect(await driver.step().switched == "1.1.0", "a lease ending exactly now no longer holds")
    }

    @Test func nothingSwitchesDuringATrialOrADownloadEvenNow() async throws {
        let s = try await staged(Self.policy(("mode", .string("now"))))
        let driver = s.driver()
        // Two checks overlap (a page's beside the periodic one): the switch waits for both.
        let (firstEnds, endFirst) = AsyncStream<Void>.makeStream()
        let (secondEnds, endSecond) = AsyncStream<Void>.makeStream()
        let downloading = Observed(0)  // checks inside whileDownloading: counted as downloads
        let first = Task {
            await driver.whileDownloading {
                downloading.update { $0 += 1 }
                for await _ in firstEnds { break }
            }
        }
        let second = Task {
            await driver.whileDownloading {
                downloading.update { $0 += 1 }
                for await _ in secondEnds { break }
            }
        }
        try await downloading.wait(for: "both checks downloading") { $0 == 2 }
        #expect(driver.downloadCount == 2)
        #expect(await driver.step().decision == .wait(.download))
        endFirst.yield()
        await first.value
        #expect(await driver.step().decision == .wait(.download), "the second check still downloads")
        endSecond.yield()
        await second.value
        #expect(driver.downloadCount == 0)
        // A trial of 1.1.0 runs (the page asked); 1.2.0 is published with mode now.
        try await s.updater.reload()
        try s.device.publish("1.2.0") { $0["apply"] = Self.policy(("mode", .string("now"))) }
        try await s.updater.checkForUpdates()
        #expect(StateStore.load(s.device.layout).pending == "1.2.0")
        #expect(await driver.step().decision == .wait(.trial), "never during another trial")
        try await s.updater.startupDidComplete()
        let step = await driver.step()
        #expect(step.switched == "1.2.0", "the trial ended: mode now switches")
    }

    @Test func aWindowWaitsForItsLocalTimeInItsOwnZone() async throws {
        // 2026-11-27T00:30:00Z is 01:30 in Berlin (CET, UTC+1).
        let start = try #require(ISO8601DateFormatter().date(from: "2026-11-27T00:30:00Z"))
        let s = try await staged(Self.policy(("mode", .string("window"))), at: start)
        let utc = try #require(TimeZone(identifier: "UTC"))
        let window = try MaintenanceWindow(parsing: "02:00-04:00", timeZone: "Europe/Berlin", defaultZone: utc)
        let driver = s.driver(windows: [window])
        let step = await driver.step()
        let opens = try #require(ISO8601DateFormatter().date(from: "2026-11-27T01:00:00Z"))
        #expect(step.decision == .wait(.window(opens: opens, window: window)))
        #expect(step.sleep == .seconds(30 * 60), "the driver sleeps until the window opens")
        let status = try await s.updater.status()
        let line = try #require(status.apply)
        #expect(line.contains("1.1.0 staged") && line.contains("02:00–04:00 Europe/Berlin") && line.contains("host pid \(getpid())"), "\(line)")
        await s.clock.advance(30 * 60 - 1)
        #expect(await driver.step().switched == nil, "01:59:59 Berlin is outside")
        await s.clock.advance(1)
        #expect(await driver.step().switched == "1.1.0")
        #expect(s.reports(.switched).last?.detail == "window")
    }

    @Test func pastTheDeadlineTheNextIdleMomentSwitchesAndPastTheGraceAnything() async throws {
        let deadline = Self.start.addingTimeInterval(3_600)
        let s = try await staged(
            Self.policy(
                ("mode", .string("next-start")), ("deadline", .string(RFC3339Time.string(from: deadline))),
                ("graceSeconds", .integer(600)), ("idleSeconds", .integer(60))))
        let driver = s.driver()
        #expect(await driver.step().decision == .wait(.nextStart))
        await s.clock.advance(3_600)
        driver.noteInput()
        driver.hold(lease: "page", for: .seconds(600))
        #expect(await driver.step().decision == .wait(.deadlineIdle(until: deadline.addingTimeInterval(60))), "a lease holds no longer")
        await s.clock.advance(30)
        driver.noteInput()  // the user keeps working
        await s.clock.advance(30)
        #expect(await driver.step().switched == nil)
        await s.clock.advance(540)  // deadline + grace
        driver.noteInput()
        let step = await driver.step()
        #expect(step.decision == .switchNow(trigger: .graceExpired) && step.switched == "1.1.0")
        #expect(s.reports(.switched).last?.detail == "graceExpired")
    }

    @Test func nextNavigationSwitchesOnTheNavigationWithoutAReload() async throws {
        let s = try await staged(Self.policy(("mode", .string("next-navigation"))))
        let driver = s.driver()
        #expect(await driver.step().decision == .wait(.nextNavigation))
        #expect(driver.waitsForNavigation)
        let reloads = await s.bridge.reloads
        #expect(await driver.navigated() == "1.1.0")
        #expect(s.current == "1.1.0")
        #expect(await s.bridge.reloads == reloads, "the navigation itself loads the new version")
        #expect(s.reports(.switched).last?.detail == "navigation")
        #expect(!driver.waitsForNavigation)
    }

    @Test func serveLetsAPageSwitchWhenThePolicyAllowsIt() async throws {
        let s = try await staged(Self.policy(("mode", .string("idle")), ("idleSeconds", .integer(60))))
        let driver = s.driver()
        driver.switchThroughPages()  // `serve`: only a page can put a version on screen
        driver.noteInput()
        #expect(await driver.step().switched == nil)
        #expect(driver.allowedSwitch() == nil, "not idle yet: no page may switch")
        await s.clock.advance(60)
        let step = await driver.step()
        #expect(step.switched == nil && s.current == "1.0.0", "the host does not switch by itself")
        #expect(driver.allowedSwitch() == "1.1.0")
        #expect(ApplyStatus.read(s.device.layout)?.line.contains("waiting for a page's shim to switch") == true)
        // A page of another version than the one served is refused, as for the page's own switch.
        await #expect(throws: UpdaterError.self) { try await driver.switchForPage(from: "0.9.0") }
        #expect(s.current == "1.0.0")
        _ = try await driver.switchForPage(from: "1.0.0")
        #expect(s.current == "1.1.0")
        #expect(s.reports(.switched).last?.detail == "idle", "the policy's trigger, not 'asked'")
    }

    @Test func serveSwitchesOnANavigationWithoutAPage() async throws {
        let s = try await staged(Self.policy(("mode", .string("now"))))
        let driver = s.driver()
        driver.switchThroughPages()
        #expect(await driver.step().switched == nil && s.current == "1.0.0")
        #expect(await driver.navigated() == "1.1.0", "a navigation gets the new version")
        #expect(s.reports(.switched).last?.detail == "now")
    }

    @Test func anUnknownModeWaitsForTheNextStartAndSaysSo() async throws {
        let s = try await staged(Self.policy(("mode", .string("when-the-moon-is-full"))))
        let driver = s.driver()
        #expect(await driver.step().decision == .wait(.nextStart))
        let line = try #require(try await s.updater.status().apply)
        #expect(line.contains("unknown mode 'when-the-moon-is-full' (read as next-start)"), "\(line)")
    }

    @Test func aReleaseWithoutPolicyKeepsTodaysRule() async throws {
        let s = try await staged(nil)
        let driver = s.driver()
        #expect(await driver.step().decision == .wait(.nextStart))
        // The page may still ask: its switch is reported as asked.
        try await s.updater.reload()
        #expect(s.reports(.switched).last?.detail == "asked")
    }

    /// The driver's loop sleeps until it is woken or its next instant: with a version staged
    /// for the next start and nothing else going on, it decides once and then waits (the
    /// first version spun: each wait's cancelled timer woke the next wait at once, a core
    /// busy and the shell's memory growing by 300 MiB in NativeShellTests).
    @Test func theLoopSleepsWhenNothingChanges() async throws {
        let s = try await staged(nil)
        let driver = s.driver()
        let running = Task { await driver.run() }
        defer { running.cancel() }
        // Asleep on the manual clock after its first decision.
        try await s.clock.manual.waitForSleeper()
        #expect(driver.decisions == 1)
        // Woken twice, it decides again each time, then sleeps.
        for _ in 0..<2 {
            let (before, slept) = (driver.decisions, s.clock.manual.sleepCount)
            driver.wake()
            try await s.clock.manual.waitForSleeps(slept + 1)  // back at its timer
            #expect(driver.decisions == before + 1, "a decision after a wake-up")
        }
        // Each 30 s of the clock is one decision, no more: a loop that spun would count more.
        let woken = driver.decisions
        for round in 1...10 {
            let slept = s.clock.manual.sleepCount
            await s.clock.advance(30)
            try await s.clock.manual.waitForSleeps(slept + 1)  // the woken loop decided and is back at its timer
            #expect(driver.decisions == woken + round, "the decision after 30 s")
        }
        #expect(driver.decisions == woken + 10, "decisions in 300 s of the clock with nothing changing: \(driver.decisions - woken)")
        running.cancel()
        await running.value
    }

    /// Exactly one switch in flight: a timer's decision starts the switch (held in the host
    /// by the test); a navigation, a second timer, a check and a page's call arrive while it
    /// runs. One switch, one `switched` report, one reload; the navigation and the page get
    /// the switch's outcome, and no status says the switch failed. (Before the machine had a
    /// `switching` state, the navigation started a second switch that found nothing pending
    /// and wrote "the switch failed", and the page's own reload was refused.)
    @Test func aNavigationATimerACheckAndAPageAtOnceSwitchOnceAndReportOnce() async throws {
        let s = try await staged(Self.policy(("mode", .string("now"))))
        let driver = s.driver()
        await s.bridge.hold()
        let timer = Task { await driver.step() }
        await s.bridge.switchEntered()
        let navigation = Task { await driver.navigated() }
        let secondTimer = Task { await driver.step() }
        let page = Task { try await driver.switchForPage(from: "1.0.0") }
        let check = Task { try await driver.whileDownloading { try await s.updater.checkForUpdates() } }
        await driver.waitForJoined(2)  // the navigation and the page wait for the switch in flight
        #expect(driver.joined == 2)
        await s.bridge.open()
        #expect(await timer.value.switched == "1.1.0")
        #expect(await navigation.value == "1.1.0", "the navigation got the switch in flight")
        #expect(await secondTimer.value.switched == nil, "a second timer starts no second switch")
        #expect(try await page.value.current == .installed("1.1.0"), "the page's call got the same switch")
        _ = try await check.value
        #expect(s.reports(.switched).filter { $0.version == "1.1.0" }.count == 1, "one switch, reported once")
        #expect(await s.bridge.reloads == 1)
        #expect(s.current == "1.1.0")
        #expect(ApplyStatus.read(s.device.layout) == nil, "no status says the switch failed")
        #expect(await driver.step().switched == nil, "and never again")
    }

    /// The staged version and its verified policy are read when the root changes, not at
    /// every decision: a hundred decisions on an unchanged root read it once; a check that
    /// ended (or a wake-up: a version staged, a trial ended) and a state.json replaced by
    /// another process make the next decision read it again.
    @Test func theStagedPolicyIsReadOnceNotAtEveryDecision() async throws {
        let s = try await staged(Self.policy(("mode", .string("idle")), ("idleSeconds", .integer(300))))
        let driver = s.driver()
        for _ in 0..<100 {
            await s.clock.advance(1)
            await driver.step()
        }
        #expect(driver.stagedReads == 1, "\(driver.stagedReads) reads for 100 decisions")
        driver.wake()
        await driver.step()
        #expect(driver.stagedReads == 2)
        // Another process replaces state.json (as `clientctl install` would).
        var state = StateStore.load(s.device.layout)
        state.pendingSince = Self.start.addingTimeInterval(-1)
        try StateStore.save(state, s.device.layout)
        await driver.step()
        #expect(driver.stagedReads == 3)
        await s.clock.advance(200)
        let step = await driver.step()
        #expect(step.switched == "1.1.0", "the policy read once still decides: \(String(describing: step.decision))")
        #expect(driver.stagedReads == 3)
    }

    /// Idle time is the monotonic clock's: a wall clock set back by a day while the device
    /// waits for quiet used to put the last input a day "in the future", so the quiet time
    /// never came (the release never switched, its status frozen). Now the switch comes
    /// after the policy's quiet time of real time, and the status says the clock jumped.
    @Test(arguments: [-60.0, -86_400, -30 * 365 * 86_400.0, 60, 86_400, 30 * 365 * 86_400.0])
    func idleTimeIsMeasuredOnTheMonotonicClockWhateverTheWallClockDoes(_ jump: TimeInterval) async throws {
        let s = try await staged(Self.policy(("mode", .string("idle")), ("idleSeconds", .integer(300))))
        let driver = s.driver()
        driver.noteInput()
        #expect(await driver.step().switched == nil)
        await s.clock.advance(100)
        s.clock.jump(jump)
        await s.clock.advance(100)
        var step = await driver.step()
        #expect(step.switched == nil, "200 s of quiet are not 300 whatever the wall clock says")
        let status = try #require(ApplyStatus.read(s.device.layout))
        #expect(status.line.contains("the wall clock jumped by \(jump < 0 ? "−" : "+")"), "\(status.line)")
        await s.clock.advance(99)
        #expect(await driver.step().switched == nil)
        await s.clock.advance(1)
        step = await driver.step()
        #expect(step.switched == "1.1.0" && step.decision == .switchNow(trigger: .idle), "\(String(describing: step.decision))")
    }

    /// A lease is a number of seconds the page asked for, on the monotonic clock: a wall
    /// clock set forward by a year no longer ends it early, nor does one set back lengthen it.
    @Test(arguments: [-365 * 86_400.0, 365 * 86_400.0])
    func aLeaseHoldsItsSecondsWhenTheWallClockJumps(_ jump: TimeInterval) async throws {
        let s = try await staged(Self.policy(("mode", .string("now"))))
        let driver = s.driver()
        driver.hold(lease: "page", for: .seconds(120))
        s.clock.jump(jump)
        await s.clock.advance(119)
        let step = await driver.step()
        #expect(step.switched == nil, "119 s of a 120 s lease")
        if case .wait(.lease)? = step.decision {} else { Issue.record("\(String(describing: step.decision))") }
        await s.clock.advance(1)
        #expect(await driver.step().switched == "1.1.0")
    }
}

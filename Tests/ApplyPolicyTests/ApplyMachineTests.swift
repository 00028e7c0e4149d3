import Foundation
import Testing

@testable import ApplyPolicy

/// The apply driver's rules as a pure state machine (docs/apply-policies.md#the-hosts-the-apply-driver):
/// events in with the clocks a test sets, actions out. Nothing sleeps, nothing is read.
struct ApplyMachineTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    /// A machine with a test's clocks: ``pass(_:)`` moves both, ``jump(_:)`` only the wall clock.
    struct Rig {
        var machine = ApplyMachine(windows: [], started: .seconds(100))
        var clocks = ApplyMachine.Clocks(wall: ApplyMachineTests.t0, monotonic: .seconds(100))

        mutating func pass(_ seconds: Int64) {
            clocks.wall += TimeInterval(seconds)
            clocks.monotonic += .seconds(seconds)
        }
        mutating func jump(_ seconds: TimeInterval) { clocks.wall += seconds }
        mutating func send(_ event: ApplyMachine.Event) -> [ApplyMachine.Action] { machine.handle(event, at: clocks) }
        mutating func decide(navigation: Bool = false) -> [ApplyMachine.Action] { send(.decide(navigation: navigation)) }

        static func staged(_ mode: ApplyMode, idle: Int? = nil, trial: Bool = false) throws -> ApplyMachine.Event {
            .staged(StagedSwitch(version: "1.1.0", since: t0, policy: try ApplyPolicy(mode: mode, idleSeconds: idle), trialRunning: trial))
        }
    }

    static func switches(_ actions: [ApplyMachine.Action]) -> String? {
        if case .switchTo(let version, _, _)? = actions.first { return version }
        return nil
    }

    static func line(_ actions: [ApplyMachine.Action]) -> String? {
        for case .writeStatus(let facts) in actions { return facts.line }
        return nil
    }

    /// The timer an answer sets: `.some(nil)` for "only when woken", `.none` for no timer.
    static func wake(_ actions: [ApplyMachine.Action]) -> Duration?? {
        for case .wake(let after) in actions { return .some(after) }
        return .none
    }

    @Test func nothingStagedAsksForNothingButAWakeUp() {
        var rig = Rig()
        #expect(rig.decide() == [.wake(after: nil)])
        #expect(rig.machine.lastDecision == nil)
    }

    @Test func idleWaitsForQuietOnTheMonotonicClockWhateverTheWallClockDoes() throws {
        var rig = Rig()
        _ = rig.send(try Rig.staged(.idle, idle: 60))
        var actions = rig.decide()
        #expect(Self.switches(actions) == nil)
        #expect(Self.wake(actions) == .some(.seconds(60)), "one timer, at the idle threshold: \(actions)")
        rig.pass(30)
        _ = rig.send(.input)
        // A day back, then thirty years ahead: neither stops nor hurries the 60 s of quiet.
        rig.pass(20)
        rig.jump(-86_400)
        actions = rig.decide()
        #expect(Self.switches(actions) == nil)
        #expect(Self.line(actions)?.contains("the wall clock jumped by −1d") == true, "\(actions)")
        rig.pass(20)
        rig.jump(30 * 365 * 86_400)
        #expect(Self.switches(rig.decide()) == nil, "40 s of quiet, not 60, whatever the wall clock says")
        rig.pass(20)
        actions = rig.decide()
        #expect(actions == [.switchTo(version: "1.1.0", trigger: "idle", reload: true)])
        #expect(rig.send(.switched(version: "1.1.0")) == [.removeStatus, .wake(after: nil)])
        #expect(Self.switches(rig.decide()) == nil, "a version is switched to once")
    }

    @Test func aLeaseHoldsItsSecondsAndNoMore() throws {
        var rig = Rig()
        _ = rig.send(try Rig.staged(.now))
        _ = rig.send(.hold(lease: "page", duration: .seconds(30)))
        #expect(Self.switches(rig.decide()) == nil)
        rig.jump(3_600)  // an hour ahead on the wall clock ends no lease
        #expect(Self.switches(rig.decide()) == nil)
        rig.pass(30)
        #expect(Self.switches(rig.decide()) == "1.1.0")
        _ = rig.send(.hold(lease: "p", duration: .seconds(86_400)))
        #expect(rig.machine.leaseCount == 1, "a day's lease is capped, not refused")
        for i in 0..<100 { _ = rig.send(.hold(lease: "page-\(i)", duration: .seconds(600))) }
        #expect(rig.machine.leaseCount == ApplyMachine.maxLeases)
    }

    @Test func aFailedSwitchIsTriedAgainAMinuteLater() throws {
        var rig = Rig()
        _ = rig.send(try Rig.staged(.now))
        #expect(Self.switches(rig.decide()) == "1.1.0")
        let failed = rig.send(.switchFailed(version: "1.1.0", message: "disk full"))
        guard case .retrying(let staged, let until) = rig.machine.state else {
            Issue.record("a failed switch waits to retry: \(rig.machine.state)")
            return
        }
        #expect(staged.version == "1.1.0" && until == .seconds(160), "a minute on the monotonic clock")
        #expect(Self.line(failed)?.hasPrefix("the switch failed, trying again at") == true)
        #expect(Self.wake(failed) == .some(.seconds(60)))
        rig.pass(59)
        #expect(Self.switches(rig.decide()) == nil)
        rig.pass(1)
        #expect(Self.switches(rig.decide()) == "1.1.0")
    }

    @Test func underServeAPageSwitchesAndADownloadWithdrawsIt() throws {
        var rig = Rig()
        _ = rig.send(.switchThroughPages)
        _ = rig.send(try Rig.staged(.now))
        let actions = rig.decide()
        #expect(Self.switches(actions) == nil, "serve never switches by itself")
        #expect(Self.line(actions)?.hasPrefix("switch allowed (mode now)") == true, "\(actions)")
        #expect(rig.machine.allowedSwitch == "1.1.0" && rig.machine.allowedTrigger == "now")
        _ = rig.send(.downloadStarted)
        #expect(rig.machine.allowedSwitch == nil, "no switch while the next version downloads")
        _ = rig.send(.downloadEnded)
        _ = rig.decide()
        #expect(rig.machine.allowedSwitch == "1.1.0")
        #expect(rig.send(.pageAsks) == [.switchForPage(version: "1.1.0", trigger: "now")])
        #expect(rig.send(.switched(version: "1.1.0")) == [.removeStatus, .wake(after: nil)])
        #expect(rig.machine.allowedSwitch == nil)
        #expect(Self.switches(rig.decide(navigation: true)) == nil, "switched once")
    }

    @Test func aTrialOrADownloadHoldsEvenNowAndANavigationTakesANextNavigationRelease() throws {
        var rig = Rig()
        _ = rig.send(try Rig.staged(.now, trial: true))
        #expect(Self.switches(rig.decide()) == nil)
        _ = rig.send(try Rig.staged(.now))
        _ = rig.send(.downloadStarted)
        #expect(Self.switches(rig.decide()) == nil)
        _ = rig.send(.downloadEnded)
        _ = rig.send(try Rig.staged(.nextNavigation))
        #expect(Self.switches(rig.decide()) == nil && rig.machine.waitsForNavigation)
        #expect(rig.decide(navigation: true) == [.switchTo(version: "1.1.0", trigger: "navigation", reload: false)])
    }

    @Test func theStatusIsWrittenWhenItChangesNotAtEveryDecision() throws {
        var rig = Rig()
        _ = rig.send(try Rig.staged(.nextStart))
        #expect(Self.line(rig.decide()) != nil)
        rig.pass(1)
        #expect(Self.line(rig.decide()) == nil, "the same line is not written again")
        _ = rig.send(.staged(nil))
        #expect(rig.decide() == [.removeStatus, .wake(after: nil)])
    }

    /// Exactly one switch in flight: while it runs, a timer's decision does nothing, a
    /// navigation and a page's call join it, a check's download and a new reading of the
    /// root change nothing; its outcome ends it once.
    @Test func oneSwitchInFlightAndEveryoneElseJoinsIt() throws {
        var rig = Rig()
        _ = rig.send(try Rig.staged(.now))
        #expect(rig.decide() == [.switchTo(version: "1.1.0", trigger: "now", reload: true)])
        #expect(rig.machine.state == .switching(version: "1.1.0", trigger: "now"))
        #expect(rig.decide() == [], "a timer during the switch starts no second one")
        #expect(rig.decide(navigation: true) == [.joinSwitch], "a navigation waits for the switch in flight")
        #expect(rig.send(.pageAsks) == [.joinSwitch], "a page's call waits for it too")
        _ = rig.send(.downloadStarted)
        _ = rig.send(try Rig.staged(.now))
        #expect(rig.machine.isSwitching, "a check and a reading of the root leave the switch in flight alone")
        _ = rig.send(.downloadEnded)
        #expect(rig.send(.switched(version: "1.1.0")) == [.removeStatus, .wake(after: nil)])
        #expect(rig.send(.switched(version: "1.1.0")) == [], "an outcome ends one switch, once")
        #expect(rig.machine.state == .idle)
        #expect(rig.decide() == [.wake(after: nil)], "nothing staged: the root is read again before the next decision")
    }

    /// A switch that finds the root changed under it (another process switched, nothing is
    /// pending any more) failed nothing: no "the switch failed" status, a decision at once.
    @Test func aSwitchTheRootOvertookIsNoFailure() throws {
        var rig = Rig()
        _ = rig.send(try Rig.staged(.now))
        #expect(Self.switches(rig.decide()) == "1.1.0")
        let after = rig.send(.switchSuperseded)
        #expect(after == [.wake(after: .zero)] && Self.line(after) == nil)
        _ = rig.send(.staged(nil))
        #expect(rig.machine.state == .idle)
    }

    /// A page's call when the policy allows nothing is the page's own reload, one switch too.
    @Test func aPagesOwnReloadIsASwitchInFlight() throws {
        var rig = Rig()
        _ = rig.send(.switchThroughPages)
        _ = rig.send(try Rig.staged(.nextStart))
        _ = rig.decide()
        #expect(rig.send(.pageAsks) == [.switchForPage(version: nil, trigger: nil)])
        #expect(rig.decide(navigation: true) == [.joinSwitch])
        #expect(rig.send(.switched(version: nil)) == [.removeStatus, .wake(after: nil)])
    }

    /// The status is facts; its line is rendered from them, the clock's jump included.
    @Test func theStatusIsFactsRenderedAsOneLine() throws {
        var rig = Rig()
        _ = rig.send(try Rig.staged(.idle, idle: 60))
        rig.pass(5)
        _ = rig.decide()
        rig.pass(5)
        rig.jump(-120)
        let written = rig.decide()
        guard case .writeStatus(let facts)? = written.first else {
            Issue.record("a jump changes the status: \(written)")
            return
        }
        #expect(facts.version == "1.1.0" && facts.policy == "idle 60 s")
        #expect(facts.clockNote?.by == .seconds(-120))
        guard case .decision(.wait(.idle)) = facts.said else {
            Issue.record("the decision is a fact: \(facts.said)")
            return
        }
        #expect(facts.line.hasPrefix("waiting for the device to be idle") && facts.line.contains("the wall clock jumped by −2m"))
    }
}

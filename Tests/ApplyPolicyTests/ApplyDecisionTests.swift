import ApplyPolicy
import Foundation
import Testing

/// One test (or more) per row of the precedence table in ``ApplyDecision/decide(_:now:)``.
/// `now` is 2026-06-10T12:00:00Z (14:00 in Berlin); the host started an hour earlier, the version was staged at 11:50.
@Suite("ApplyDecision precedence")
struct ApplyDecisionTests {
    let now: Date
    let berlinNight: MaintenanceWindow

    init() throws {
        now = try at("2026-06-10T12:00:00Z")
        berlinNight = try window("02:00-04:00@Europe/Berlin")
    }

    func input(_ policy: ApplyPolicy) throws -> ApplyInput {
        ApplyInput(policy: policy, stagedAt: try at("2026-06-10T11:50:00Z"), hostStartedAt: try at("2026-06-10T11:00:00Z"))
    }

    func seconds(_ offset: TimeInterval) -> Date {
        now.addingTimeInterval(offset)
    }

    /// A policy whose deadline is `deadlineOffset` seconds from `now`.
    func policy(_ mode: ApplyMode, idle: Int? = nil, deadlineOffset: TimeInterval? = nil, grace: Int = 3_600) throws -> ApplyPolicy {
        try ApplyPolicy(mode: mode, idleSeconds: idle, deadline: deadlineOffset.map(seconds), graceSeconds: grace)
    }

    // MARK: Row 1

    @Test("row 1: already switched is done, whatever else holds")
    func row1() throws {
        var input = try input(try policy(.now, deadlineOffset: -86_400))
        input.alreadySwitched = true
        input.trialRunning = true
        input.downloading = true
        input.leaseUntil = seconds(60)
        #expect(ApplyDecision.decide(input, now: now) == .done)
        #expect(ApplyDecision.nextWake(input, now: now) == nil)
    }

    // MARK: Row 2

    @Test("row 2: a trial or a download holds, even past deadline + grace")
    func row2() throws {
        var input = try input(try policy(.now, deadlineOffset: -86_400, grace: 0))
        input.trialRunning = true
        #expect(ApplyDecision.decide(input, now: now) == .wait(.trial))
        input.downloading = true
        #expect(ApplyDecision.decide(input, now: now) == .wait(.trial))
        input.trialRunning = false
        #expect(ApplyDecision.decide(input, now: now) == .wait(.download))
        #expect(ApplyDecision.nextWake(input, now: now) == nil)
        input.downloading = false
        #expect(ApplyDecision.decide(input, now: now) == .switchNow(trigger: .graceExpired))
    }

    // MARK: Row 3

    @Test("row 3: past deadline + grace switches whatever leases, windows and input say")
    func row3() throws {
        var input = try input(try policy(.window, idle: 600, deadlineOffset: -3_600, grace: 3_600))
        input.windows = [berlinNight]
        input.lastInput = now
        input.leaseUntil = seconds(3_600)
        #expect(ApplyDecision.decide(input, now: now) == .switchNow(trigger: .graceExpired))
        #expect(ApplyDecision.decide(input, now: seconds(-0.001)) == .wait(.deadlineIdle(until: now)))
        #expect(ApplyDecision.nextWake(input, now: now) == nil)
    }

    @Test("row 3: grace 0 switches at the deadline itself")
    func row3GraceZero() throws {
        var input = try input(try policy(.nextStart, deadlineOffset: 0, grace: 0))
        input.lastInput = now
        #expect(ApplyDecision.decide(input, now: now) == .switchNow(trigger: .graceExpired))
        #expect(ApplyDecision.decide(input, now: seconds(-1)) == .wait(.nextStart))
    }

    // MARK: Row 4

    @Test("row 4: past the deadline, idle for the default 60 s switches even with a lease and a closed window")
    func row4Switch() throws {
        var input = try input(try policy(.window, deadlineOffset: -600))
        input.windows = [berlinNight]
        input.leaseUntil = seconds(600)
        input.lastInput = seconds(-60)
        #expect(ApplyDecision.decide(input, now: now) == .switchNow(trigger: .deadline))
    }

    @Test("row 4: past the deadline with recent input waits for an idle moment; leases and windows do not hold")
    func row4Wait() throws {
        var input = try input(try policy(.window, deadlineOffset: -600))
        input.windows = [berlinNight]
        input.leaseUntil = seconds(600)
        input.lastInput = seconds(-5)
        #expect(ApplyDecision.decide(input, now: now) == .wait(.deadlineIdle(until: seconds(55))))
        #expect(ApplyDecision.nextWake(input, now: now) == seconds(55))
        #expect(ApplyDecision.decide(input, now: seconds(55)) == .switchNow(trigger: .deadline))
    }

    @Test("row 4: the policy's idle seconds are used, and the wait is capped at deadline + grace")
    func row4Capped() throws {
        var input = try input(try policy(.idle, idle: 300, deadlineOffset: -600, grace: 3_600))
        input.lastInput = seconds(-100)
        #expect(ApplyDecision.decide(input, now: now) == .wait(.deadlineIdle(until: seconds(200))))
        input.policy = try policy(.idle, idle: 600, deadlineOffset: -3_540, grace: 3_600)
        input.lastInput = now
        #expect(ApplyDecision.decide(input, now: now) == .wait(.deadlineIdle(until: seconds(60))))
        #expect(ApplyDecision.decide(input, now: seconds(60)) == .switchNow(trigger: .graceExpired))
    }

    @Test("row 4: exactly at the deadline counts as past it")
    func row4Boundary() throws {
        var input = try input(try policy(.nextNavigation, deadlineOffset: 0))
        input.leaseUntil = seconds(30)
        #expect(ApplyDecision.decide(input, now: now) == .switchNow(trigger: .deadline))
        input.lastInput = seconds(-59)
        #expect(ApplyDecision.decide(input, now: now) == .wait(.deadlineIdle(until: seconds(1))))
        #expect(ApplyDecision.decide(input, now: seconds(-1)) == .wait(.lease(until: now)))
    }

    // MARK: Row 5

    @Test("row 5: a live lease holds even mode now; it is capped at the deadline")
    func row5() throws {
        var input = try input(try policy(.now))
        input.leaseUntil = seconds(300)
        #expect(ApplyDecision.decide(input, now: now) == .wait(.lease(until: seconds(300))))
        #expect(ApplyDecision.nextWake(input, now: now) == seconds(300))
        input.policy = try policy(.now, deadlineOffset: 120)
        #expect(ApplyDecision.decide(input, now: now) == .wait(.lease(until: seconds(120))))
        #expect(ApplyDecision.nextWake(input, now: now) == seconds(120))
    }

    @Test("row 5: a lease expiring now or earlier no longer holds")
    func row5Expired() throws {
        var input = try input(try policy(.now))
        input.leaseUntil = now
        #expect(ApplyDecision.decide(input, now: now) == .switchNow(trigger: .now))
        input.leaseUntil = seconds(-10)
        #expect(ApplyDecision.decide(input, now: now) == .switchNow(trigger: .now))
    }

    @Test("row 5: a lease holds before modes idle, window, next-navigation and next-start too")
    func row5BeforeModes() throws {
        for mode in [ApplyMode.idle, .window, .nextNavigation, .nextStart] {
            var input = try input(try policy(mode, idle: 60))
            input.windows = [try window("00:00-24:00@UTC")]
            input.leaseUntil = seconds(30)
            #expect(ApplyDecision.decide(input, now: now) == .wait(.lease(until: seconds(30))), "\(mode)")
        }
    }

    // MARK: Row 6

    @Test("row 6: mode now switches at once, even with recent input")
    func row6() throws {
        var input = try input(try policy(.now, deadlineOffset: 86_400))
        input.lastInput = now
        #expect(ApplyDecision.decide(input, now: now) == .switchNow(trigger: .now))
        #expect(ApplyDecision.nextWake(input, now: now) == nil)
    }

    // MARK: Row 7

    @Test("row 7: mode idle switches once idle for idleSeconds, else waits until then")
    func row7() throws {
        var input = try input(try policy(.idle, idle: 300))
        input.lastInput = seconds(-299)
        #expect(ApplyDecision.decide(input, now: now) == .wait(.idle(until: seconds(1))))
        #expect(ApplyDecision.nextWake(input, now: now) == seconds(1))
        input.lastInput = seconds(-300)
        #expect(ApplyDecision.decide(input, now: now) == .switchNow(trigger: .idle))
    }

    @Test("row 7: no input seen: idle since the host started")
    func row7NoInput() throws {
        var input = try input(try policy(.idle, idle: 3_600))
        #expect(ApplyDecision.decide(input, now: now) == .switchNow(trigger: .idle))
        input.hostStartedAt = seconds(-100)
        #expect(ApplyDecision.decide(input, now: now) == .wait(.idle(until: seconds(3_500))))
    }

    @Test("row 7: input from before the host started does not count")
    func row7InputBeforeStart() throws {
        var input = try input(try policy(.idle, idle: 300))
        input.hostStartedAt = seconds(-100)
        input.lastInput = seconds(-3_600)
        #expect(ApplyDecision.decide(input, now: now) == .wait(.idle(until: seconds(200))))
    }

    @Test("row 7: the wait is not extended by a later deadline, but the wake is capped by an earlier one")
    func row7Deadline() throws {
        var input = try input(try policy(.idle, idle: 300, deadlineOffset: 100))
        input.lastInput = now
        #expect(ApplyDecision.decide(input, now: now) == .wait(.idle(until: seconds(300))))
        #expect(ApplyDecision.nextWake(input, now: now) == seconds(100))
        #expect(ApplyDecision.decide(input, now: seconds(100)) == .wait(.deadlineIdle(until: seconds(300))))
    }

    // MARK: Row 8

    @Test("row 8: inside a window switches")
    func row8Inside() throws {
        var input = try input(try policy(.window))
        input.windows = [berlinNight]
        let insideNow = try at("2026-06-10T01:00:00Z")  // 03:00 CEST
        input.lastInput = insideNow
        #expect(ApplyDecision.decide(input, now: insideNow) == .switchNow(trigger: .window))
    }

    @Test("row 8: outside, waits for the earliest opening among the windows (first listed on ties)")
    func row8Outside() throws {
        var input = try input(try policy(.window))
        input.windows = [berlinNight]
        #expect(ApplyDecision.decide(input, now: now) == .wait(.window(opens: try at("2026-06-11T00:00:00Z"), window: berlinNight)))
        let evening = try window("20:00-21:00@UTC")
        input.windows = [berlinNight, evening]
        #expect(ApplyDecision.decide(input, now: now) == .wait(.window(opens: try at("2026-06-10T20:00:00Z"), window: evening)))
        #expect(ApplyDecision.nextWake(input, now: now) == (try at("2026-06-10T20:00:00Z")))
        let sameTime = try window("22:00-23:00@Europe/Berlin")
        input.windows = [evening, sameTime]
        #expect(ApplyDecision.decide(input, now: now) == .wait(.window(opens: try at("2026-06-10T20:00:00Z"), window: evening)))
        input.windows = [sameTime, evening]
        #expect(ApplyDecision.decide(input, now: now) == .wait(.window(opens: try at("2026-06-10T20:00:00Z"), window: sameTime)))
        #expect(ApplyDecision.decide(input, now: try at("2026-06-10T20:00:00Z")) == .switchNow(trigger: .window))
    }

    @Test("row 8: no windows: waits for a window and says the device has none; only a deadline ends it")
    func row8NoWindows() throws {
        var input = try input(try policy(.window))
        let decision = ApplyDecision.decide(input, now: now)
        #expect(decision == .wait(.window(opens: nil, window: nil)))
        #expect(decision.description == "waiting for a maintenance window, but this device has none (mode window switches only inside one)")
        #expect(ApplyDecision.nextWake(input, now: now) == nil)
        input.policy = try policy(.window, deadlineOffset: 7_200)
        #expect(ApplyDecision.nextWake(input, now: now) == seconds(7_200))
    }

    @Test("row 8: a window opening after the deadline: the wake is the deadline")
    func row8DeadlineFirst() throws {
        var input = try input(try policy(.window, deadlineOffset: 600))
        input.windows = [berlinNight]
        #expect(ApplyDecision.nextWake(input, now: now) == seconds(600))
    }

    // MARK: Rows 9 and 10

    @Test("row 9: next-navigation waits for the navigation; the wake is the deadline if any")
    func row9() throws {
        var input = try input(try policy(.nextNavigation))
        input.lastInput = seconds(-86_400)
        #expect(ApplyDecision.decide(input, now: now) == .wait(.nextNavigation))
        #expect(ApplyDecision.nextWake(input, now: now) == nil)
        input.policy = try policy(.nextNavigation, deadlineOffset: 60)
        #expect(ApplyDecision.nextWake(input, now: now) == seconds(60))
    }

    @Test("row 10: next-start waits for the next start, also for a long-idle device")
    func row10() throws {
        var input = try input(.nextStart)
        input.lastInput = seconds(-86_400)
        #expect(ApplyDecision.decide(input, now: now) == .wait(.nextStart))
        #expect(ApplyDecision.nextWake(input, now: now) == nil)
    }

    // MARK: Status lines

    @Test("status lines")
    func descriptions() throws {
        #expect(ApplyDecision.done.description == "already switched to this version")
        #expect(ApplyDecision.switchNow(trigger: .graceExpired).description == "switch now (deadline grace expired)")
        #expect(ApplyDecision.wait(.lease(until: now)).description == "waiting: a page holds a lease until 2026-06-10T12:00:00Z")
        let waiting = ApplyDecision.wait(.window(opens: try at("2026-03-29T01:00:00Z"), window: berlinNight))
        #expect(waiting.description == "waiting for maintenance window 02:00–04:00 Europe/Berlin (opens 2026-03-29T01:00:00Z)")
        #expect(
            ApplyDecision.wait(.idle(until: now)).description
                == "waiting for the device to be idle (at 2026-06-10T12:00:00Z if no more input arrives)"
        )
    }
}

import ApplyPolicy
import Foundation
import Testing

@Suite("Clock jumps and wake-ups")
struct ClockAndWakeTests {
    let now: Date

    init() throws {
        now = try at("2026-06-10T12:00:00Z")
    }

    func seconds(_ offset: TimeInterval) -> Date {
        now.addingTimeInterval(offset)
    }

    @Test("clock went back before the staging and the host start: no early switch, a bounded wait, then a switch")
    func backBeforeStaging() throws {
        let policy = try ApplyPolicy(mode: .idle, idleSeconds: 300)
        let input = ApplyInput(policy: policy, stagedAt: seconds(86_400), hostStartedAt: seconds(82_800))
        #expect(ApplyDecision.decide(input, now: now) == .wait(.idle(until: seconds(300))))
        #expect(ApplyDecision.nextWake(input, now: now) == seconds(300))
        // A host that stores the clamped stamps switches once the idle time has really passed.
        let clamped = input.clamped(to: now)
        #expect(clamped.stagedAt == now)
        #expect(clamped.hostStartedAt == now)
        #expect(ApplyDecision.decide(clamped, now: seconds(299)) == .wait(.idle(until: seconds(300))))
        #expect(ApplyDecision.decide(clamped, now: seconds(300)) == .switchNow(trigger: .idle))
    }

    @Test("input stamped in the future (clock went back) counts as input now, not as idle time")
    func inputInFuture() throws {
        var input = ApplyInput(
            policy: try ApplyPolicy(mode: .idle, idleSeconds: 60),
            stagedAt: seconds(-600),
            hostStartedAt: seconds(-3_600),
            lastInput: seconds(7_200)
        )
        #expect(input.idleSeconds(at: now) == 0)
        #expect(ApplyDecision.decide(input, now: now) == .wait(.idle(until: seconds(60))))
        input = input.clamped(to: now)
        #expect(input.lastInput == now)
        #expect(input.hostStartedAt == seconds(-3_600))
        #expect(ApplyDecision.decide(input, now: seconds(60)) == .switchNow(trigger: .idle))
    }

    @Test("past the deadline with future input: waits one idle period at most, capped by the grace")
    func deadlineWithFutureInput() throws {
        let policy = try ApplyPolicy(mode: .nextStart, deadline: seconds(-600), graceSeconds: 3_600)
        let input = ApplyInput(policy: policy, stagedAt: seconds(-900), hostStartedAt: seconds(-3_600), lastInput: seconds(86_400))
        #expect(ApplyDecision.decide(input, now: now) == .wait(.deadlineIdle(until: seconds(60))))
    }

    @Test("clock went back to before the deadline: the mode rules again")
    func backBeforeDeadline() throws {
        let policy = try ApplyPolicy(mode: .nextStart, deadline: seconds(600))
        let input = ApplyInput(policy: policy, stagedAt: seconds(900), hostStartedAt: seconds(800))
        #expect(ApplyDecision.decide(input, now: now) == .wait(.nextStart))
        #expect(ApplyDecision.nextWake(input, now: now) == seconds(600))
        #expect(ApplyDecision.decide(input, now: seconds(600)) == .wait(.deadlineIdle(until: seconds(660))))
    }

    @Test("a lease does not count down from the past: it holds until its expiry")
    func leaseAfterJump() throws {
        let input = ApplyInput(policy: try ApplyPolicy(mode: .now), stagedAt: seconds(60), hostStartedAt: seconds(30), leaseUntil: seconds(90))
        #expect(ApplyDecision.decide(input, now: now) == .wait(.lease(until: seconds(90))))
        #expect(input.clamped(to: now).leaseUntil == seconds(90))
    }

    /// Between `now` and the wake-up the answer does not change; at the wake-up it does.
    @Test("nextWake is the first instant the answer changes without new input")
    func wakeIsExact() throws {
        let berlinNight = try window("02:00-04:00@Europe/Berlin")
        let inputs = [
            ApplyInput(
                policy: try ApplyPolicy(mode: .idle, idleSeconds: 300), stagedAt: now, hostStartedAt: seconds(-3_600), lastInput: seconds(-10)
            ),
            ApplyInput(policy: try ApplyPolicy(mode: .window), stagedAt: now, hostStartedAt: seconds(-3_600), windows: [berlinNight]),
            ApplyInput(
                policy: try ApplyPolicy(mode: .window, deadline: seconds(3_600)),
                stagedAt: now, hostStartedAt: seconds(-3_600), windows: [berlinNight]
            ),
            ApplyInput(policy: try ApplyPolicy(mode: .nextStart, deadline: seconds(7_200)), stagedAt: now, hostStartedAt: seconds(-3_600)),
            ApplyInput(
                policy: try ApplyPolicy(mode: .now, deadline: seconds(7_200)),
                stagedAt: now, hostStartedAt: seconds(-3_600), leaseUntil: seconds(600)
            ),
            ApplyInput(
                policy: try ApplyPolicy(mode: .nextStart, deadline: seconds(-60), graceSeconds: 600),
                stagedAt: now, hostStartedAt: seconds(-3_600), lastInput: now
            ),
        ]
        let expectedWakes = [seconds(290), try at("2026-06-11T00:00:00Z"), seconds(3_600), seconds(7_200), seconds(600), seconds(60)]
        for (input, expected) in zip(inputs, expectedWakes) {
            let first = ApplyDecision.decide(input, now: now)
            let wake = try #require(ApplyDecision.nextWake(input, now: now))
            #expect(wake == expected, "\(first)")
            for fraction in [0.25, 0.5, 0.999] {
                let between = now.addingTimeInterval(wake.timeIntervalSince(now) * fraction)
                #expect(ApplyDecision.decide(input, now: between) == first, "\(first) at \(fraction)")
            }
            #expect(ApplyDecision.decide(input, now: wake) != first, "\(first) at wake")
        }
    }
}

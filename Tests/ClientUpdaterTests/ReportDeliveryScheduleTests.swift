import ClientUpdater
import FleetReports
import Foundation
import Testing

/// The delivery schedule as a pure state machine (docs/fleet-reports.md#delivery): every
/// transition at a time the test names, jitter from a number the test names; nothing sleeps.
@Suite struct ReportDeliveryScheduleTests {
    let t0 = Duration.seconds(1000)

    @Test func aNewReportGoesOutAfterTheBatchingWindow() {
        var s = ReportDeliverySchedule(now: t0)
        #expect(s.due == nil, "nothing to send")
        s.reportsWaiting(now: t0)
        #expect(s.due == t0 + .seconds(5))
        s.reportsWaiting(now: t0 + .seconds(3))
        #expect(s.due == t0 + .seconds(5), "a second report joins the same batch")
    }

    @Test func steadyStateIsAFewRequestsAnHour() {
        // A device reporting every minute for a day: its requests per hour stay ≤ 4 + burst.
        var s = ReportDeliverySchedule(now: t0)
        var now = t0
        var sent: [Duration] = []
        let end = t0 + .seconds(86_400)
        var nextReport = t0
        while now < end {
            if now >= nextReport {
                s.reportsWaiting(now: now)
                nextReport = now + .seconds(60)
            }
            if let due = s.due, due <= now {
                s.attempting(now: now)
                sent.append(now)
                _ = s.attempted(.delivered(more: false), now: now, random: 0.5)
            }
            now += .seconds(1)
        }
        let hours = 24
        #expect(sent.count <= hours * 4 + 4, "\(sent.count) requests in a day")
        #expect(sent.count >= hours * 4 - 1, "still delivering: \(sent.count)")
        // The busiest hour after the first: the refill rate.
        let laterHour = sent.filter { $0 >= t0 + .seconds(7200) && $0 < t0 + .seconds(10_800) }
        #expect(laterHour.count <= 5, "\(laterHour.count) in one hour")
    }

    @Test func failuresBackOffExponentiallyWithJitterUpToTheCap() {
        var s = ReportDeliverySchedule(now: t0)
        var now = t0
        var waits: [Double] = []
        for attempt in 0..<10 {
            s.reportsWaiting(now: now)
            now = s.due ?? now
            s.attempting(now: now)
            _ = s.attempted(.failed, now: now, random: attempt.isMultiple(of: 2) ? 0 : 0.999)
            let wait = (s.due ?? now) - now
            waits.append(Double(wait.components.seconds))
            #expect(s.failures == attempt + 1)
        }
        // base 30 s: [15, 30], [30, 60], [60, 120], …, capped at 3600 (upper half: ≥ 1800).
        #expect(waits[0] >= 15 && waits[0] <= 30, "\(waits)")
        #expect(waits[1] >= 30 && waits[1] <= 60, "\(waits)")
        #expect(waits[2] >= 60 && waits[2] <= 120, "\(waits)")
        #expect(waits.allSatisfy { $0 <= 3600 }, "\(waits)")
        #expect(waits[9] >= 1800, "\(waits)")
        s.attempting(now: now + .seconds(3600))
        _ = s.attempted(.delivered(more: false), now: now + .seconds(3600), random: 0)
        #expect(s.failures == 0 && s.due == nil, "a delivery ends the backoff")
    }

    @Test func retryAfterIsHonouredAndCapped() {
        var s = ReportDeliverySchedule(now: t0)
        s.reportsWaiting(now: t0)
        s.attempting(now: t0 + .seconds(5))
        _ = s.attempted(.busy(retryAfter: .seconds(900)), now: t0 + .seconds(5), random: 0)
        #expect(s.due == t0 + .seconds(905))
        s.reportsWaiting(now: t0 + .seconds(10))
        #expect(s.due == t0 + .seconds(905), "a new report does not jump the collector's wait")
        s.attempting(now: t0 + .seconds(905))
        _ = s.attempted(.busy(retryAfter: .seconds(86_400 * 30)), now: t0 + .seconds(905), random: 0)
        #expect(s.due == t0 + .seconds(905 + 6 * 3600), "capped at 6 hours")
        s.attempting(now: t0 + .seconds(30_000))
        _ = s.attempted(.busy(retryAfter: .seconds(1)), now: t0 + .seconds(30_000), random: 0)
        #expect((s.due ?? t0) >= t0 + .seconds(30_000 + 30), "never sooner than the backoff (\(String(describing: s.due)))")
    }

    @Test func aBatchRefusedThreeTimesIsDropped() {
        var s = ReportDeliverySchedule(now: t0)
        var now = t0
        var verdicts: [ReportDeliverySchedule.Verdict] = []
        for _ in 0..<3 {
            s.reportsWaiting(now: now)
            now = s.due ?? now
            s.attempting(now: now)
            verdicts.append(s.attempted(.refused(firstSeq: 7), now: now, random: 0))
        }
        #expect(verdicts == [.wait, .wait, .dropBatch])
        #expect(s.refusedSeq == nil && s.failures == 0)
        // Another batch's refusal starts a new count.
        s.attempting(now: now)
        #expect(s.attempted(.refused(firstSeq: 7), now: now, random: 0) == .wait)
        s.attempting(now: now)
        #expect(s.attempted(.refused(firstSeq: 9), now: now, random: 0) == .wait)
        #expect(s.refusedSeq == 9 && s.refusedCount == 1)
    }

    @Test func retryAfterHeaderValues() throws {
        let now = Date(timeIntervalSince1970: 1_764_090_000)  // 2025-11-25T17:00:00Z
        #expect(RetryAfter.parse("120", now: now) == .seconds(120))
        #expect(RetryAfter.parse(" 0 ", now: now) == .seconds(0))
        // RFC 9110 §5.6.7 IMF-fixdate, 10 minutes after `now`.
        #expect(RetryAfter.parse("Tue, 25 Nov 2025 17:10:00 GMT", now: now) == .seconds(600))
        #expect(RetryAfter.parse("Tue, 25 Nov 2025 16:50:00 GMT", now: now) == .seconds(0), "a date in the past: now")
        #expect(RetryAfter.parse("-5", now: now) == nil)
        #expect(RetryAfter.parse("soon", now: now) == nil)
    }
}

/// Reports that can wait for company (docs/fleet-reports.md#delivery): which ones, for how
/// long, and what ends the wait; a pure rule on the reports' own times.
@Suite struct ReportHoldTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    let hold = Duration.seconds(12 * 3600)

    func report(_ type: ReportKind, at offset: TimeInterval, reason: ReportReason? = nil) -> FleetReport {
        var r = FleetReport(seq: 1, time: t0.addingTimeInterval(offset), type: type, running: "1.0.0")
        r.reason = reason
        return r
    }

    @Test func heartbeatsAndRolloutWaitsWaitTwelveHoursFromTheOldest() {
        let pending = [report(.heartbeat, at: 0), report(.checkRefused, at: 3600, reason: .rollout)]
        #expect(ReportDeliverySchedule.heldUntil(pending, now: t0.addingTimeInterval(7200), hold: hold) == t0.addingTimeInterval(12 * 3600))
        #expect(ReportDeliverySchedule.heldUntil(pending, now: t0.addingTimeInterval(12 * 3600), hold: hold) == nil, "the hold ends exactly")
    }

    @Test(arguments: [
        (ReportKind.installed, ReportReason?.none), (.checkRefused, .signature), (.checkRefused, .revoked), (.rolledBack, .timedOut),
        (.checkFailed, .network), (.switched, nil), (.dropped, nil),
    ])
    func aReportThatMattersTakesTheWaitingOnesAlong(type: ReportKind, reason: ReportReason?) {
        let pending = [report(.heartbeat, at: 0), report(type, at: 60, reason: reason)]
        #expect(ReportDeliverySchedule.heldUntil(pending, now: t0.addingTimeInterval(120), hold: hold) == nil)
        #expect(!ReportDeliverySchedule.canWait(report(type, at: 0, reason: reason)))
    }

    @Test func aClockThatWentBackSendsAtOnce() {
        // The oldest report is stamped an hour after "now": holding would last the jump.
        let pending = [report(.heartbeat, at: 3600)]
        #expect(ReportDeliverySchedule.heldUntil(pending, now: t0, hold: hold) == nil)
    }

    @Test func nothingPendingIsNotHeld() {
        #expect(ReportDeliverySchedule.heldUntil([], now: t0, hold: hold) == nil)
    }

    @Test func aReportThatMattersEndsTheHoldOfTheSchedule() {
        let start = Duration.seconds(1000)
        var s = ReportDeliverySchedule(now: start)
        s.reportsWaiting(now: start)
        s.holding(until: start + .seconds(12 * 3600))
        #expect(s.due == start + .seconds(12 * 3600), "held, and no token taken")
        s.reportsWaiting(now: start + .seconds(60))
        #expect(s.due == start + .seconds(65), "a new report: the batching window again")
    }
}

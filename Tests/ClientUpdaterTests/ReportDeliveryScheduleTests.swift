import ClientUpdater
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

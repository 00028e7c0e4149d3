import ClientEngine
import Foundation
import Testing

/// After a deferred download the agent checks again at the first moment it may, plus its own
/// share of a tenth of the interval, never later than its usual delay (docs/download-policy.md).
@Suite struct CheckScheduleDeferralTests {
    let now = Date(timeIntervalSince1970: 1_780_000_000)

    @Test func aDeferredDownloadIsCheckedAgainWhenItMayStartWithinATenthOfTheInterval() {
        let schedule = CheckSchedule(every: .seconds(3600), device: "device-a")
        for check in 1...50 {
            let usual = schedule.delay(before: check)
            // The window opens in 10 minutes: the device checks within 10 to 16 minutes.
            let soon = schedule.delay(before: check, deferredUntil: now.addingTimeInterval(600), now: now)
            #expect(soon >= .seconds(600) && soon < .seconds(600 + 360), "check \(check): \(soon)")
            #expect(soon <= usual)
            // A moment past the usual delay: the usual check comes first.
            #expect(schedule.delay(before: check, deferredUntil: now.addingTimeInterval(86_400), now: now) == usual)
            // A moment already past: at least a second, not at once in a loop.
            let past = schedule.delay(before: check, deferredUntil: now.addingTimeInterval(-60), now: now)
            #expect(past >= .seconds(1) && past < .seconds(361))
        }
        // Two devices whose window opens together do not check together.
        let other = CheckSchedule(every: .seconds(3600), device: "device-b")
        let mine = (1...20).map { schedule.delay(before: $0, deferredUntil: now.addingTimeInterval(600), now: now) }
        let theirs = (1...20).map { other.delay(before: $0, deferredUntil: now.addingTimeInterval(600), now: now) }
        #expect(mine != theirs)
    }
}

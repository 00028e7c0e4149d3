import ClientEngine
import Foundation
import Testing

/// Periodic checks spread out (issue 45, as Omaha and ChromeOS do): each wait is the interval
/// ±10 %, seeded by the device, and never shorter than the feed's `Retry-After`, capped.
@Suite struct CheckScheduleTests {
    static let hour = Duration.seconds(3600)

    @Test func everyDelayIsWithinTenPercentAndTheyDiffer() {
        let schedule = CheckSchedule(every: .seconds(3600), device: "a1b2c3")
        let delays = (1...1000).map { schedule.delay(before: $0) }
        #expect(delays.allSatisfy { $0 >= Self.hour * 0.9 && $0 <= Self.hour * 1.1 }, "\(delays.min() ?? .zero) … \(delays.max() ?? .zero)")
        #expect(Set(delays).count > 990, "one device's checks are not all on the same beat")
        let mean = delays.reduce(Duration.zero, +) / 1000
        #expect(mean > Self.hour * 0.98 && mean < Self.hour * 1.02, "on average the interval: \(mean)")
    }

    @Test func aDeviceKeepsItsDelaysAndAFleetStartedTogetherSpreadsOut() {
        let one = CheckSchedule(every: .seconds(3600), device: "device-1")
        #expect((1...20).map { one.delay(before: $0) } == (1...20).map { CheckSchedule(every: .seconds(3600), device: "device-1").delay(before: $0) })
        // A thousand devices started at the same moment: their first checks fall into all ten
        // tenths of the ±10 % band, none nearly empty (a uniform spread puts 100 in each).
        var tenths = [Int](repeating: 0, count: 10)
        for device in 0..<1000 {
            let delay = CheckSchedule(every: .seconds(3600), device: "device-\(device)").delay(before: 1)
            let position = (delay - Self.hour * 0.9) / (Self.hour * 0.2)
            tenths[min(9, max(0, Int(position * 10)))] += 1
        }
        #expect(tenths.allSatisfy { $0 >= 50 }, "\(tenths)")
    }

    @Test func aRetryAfterLongerThanTheSpreadWinsUpToADay() {
        let schedule = CheckSchedule(every: .seconds(600), device: "d")
        let spread = schedule.delay(before: 3)
        #expect(schedule.delay(before: 3, retryAfter: .seconds(5)) == spread, "a shorter Retry-After changes nothing")
        #expect(schedule.delay(before: 3, retryAfter: .seconds(7200)) == .seconds(7200))
        #expect(schedule.delay(before: 3, retryAfter: .seconds(30 * 86_400)) == .seconds(86_400), "capped at a day")
        let weekly = CheckSchedule(every: .seconds(604_800), device: "d")
        let asked = weekly.delay(before: 1, retryAfter: .seconds(30 * 86_400))
        #expect(asked == max(weekly.delay(before: 1), .seconds(604_800)), "or at the interval when that is longer: \(asked)")
    }
}

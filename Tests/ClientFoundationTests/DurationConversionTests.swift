import ClientFoundation
import Foundation
import Testing

/// The conversions between `Duration` and the numbers at the edges (files, options, wall
/// clocks): the one place each is written.
@Suite struct DurationConversionTests {
    @Test func secondsAndMillisecondsForFiguresOnly() {
        #expect(Duration.milliseconds(1_500).inSeconds == 1.5)
        #expect(Duration.milliseconds(-250).inSeconds == -0.25)
        #expect(Duration.milliseconds(1_999).inMilliseconds == 1_999)
        #expect(Duration.nanoseconds(1_999_999).inMilliseconds == 1, "rounded toward zero")
        #expect(Duration.seconds(Int64.max).inMilliseconds == .max, "held within Int64")
    }

    @Test func secondsFromAnOptionAreClampedAndRounded() {
        #expect(Duration.seconds(clamping: 0.0005) == .zero, "below a millisecond")
        #expect(Duration.seconds(clamping: 2.5) == .milliseconds(2_500))
        #expect(Duration.seconds(clamping: -3) == .zero)
        #expect(Duration.seconds(clamping: .nan) == .zero && Duration.seconds(clamping: .infinity) == .zero)
        #expect(Duration.seconds(clamping: 1e300, limit: .seconds(600)) == .seconds(600))
    }

    /// A wall clock set back gives a negative duration, which the apply machine reads as a
    /// jump; a date far off is held within a century, not trapped on.
    @Test func wallClockDurationsAreSignedRoundedAndBounded() {
        let t = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(Duration.wallClock(from: t, to: t.addingTimeInterval(30)) == .seconds(30))
        #expect(Duration.wallClock(from: t, to: t.addingTimeInterval(-90.0004)) == .milliseconds(-90_000))
        #expect(Duration.wallClock(from: t, to: t.addingTimeInterval(0.0006)) == .milliseconds(1))
        #expect(Duration.wallClock(from: .distantPast, to: .distantFuture) == .seconds(100 * 366 * 86_400))
        #expect(Duration.wallClock(from: .distantFuture, to: .distantPast) == .seconds(-100 * 366 * 86_400))
    }
}

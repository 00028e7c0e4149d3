import ClientFoundation
import TestSupport
import Testing

/// The one token bucket, on the readings of a monotonic clock (a manual one: no sleeping).
@Suite struct TokenBucketTests {
    @Test func takeGrantsTheBurstThenSaysHowLongUntilTheNextToken() {
        var bucket = TokenBucket(capacity: 2, refill: 1, every: .seconds(1))
        #expect(bucket.take(at: .zero) == nil)
        #expect(bucket.take(at: .zero) == nil)
        #expect(bucket.take(at: .zero) == .seconds(1), "empty: a token in a second")
        #expect(bucket.take(at: .milliseconds(400)) == .milliseconds(600), "a refused take takes nothing")
        #expect(bucket.take(at: .seconds(1)) == nil)
        #expect(bucket.take(3, at: .seconds(1)) == .seconds(3), "more than the bucket holds: the time to earn it")
    }

    @Test func idleTimeRefillsAtMostTheCapacity() {
        var bucket = TokenBucket(capacity: 3, refill: 60, every: .seconds(60))
        for _ in 0..<3 { #expect(bucket.take(at: .zero) == nil) }
        // An hour without a take earns the capacity, not an hour's worth.
        for _ in 0..<3 { #expect(bucket.take(at: .seconds(3600)) == nil) }
        #expect(bucket.take(at: .seconds(3600)) != nil)
        #expect(bucket.tokens == 0)
    }

    @Test func spendGoesIntoDebtAndSaysHowLongToPayItBack() {
        var bucket = TokenBucket(capacity: 100_000, refill: 1_000_000, every: .seconds(1))
        #expect(bucket.spend(100_000, at: .zero) == .zero, "the burst passes at once")
        #expect(bucket.spend(50_000, at: .zero) == .milliseconds(50), "50,000 of debt at 1,000,000 a second")
        #expect(bucket.tokens == -50_000)
        #expect(bucket.spend(0, at: .milliseconds(50)) == .zero, "paid back after the wait")
        #expect(bucket.spend(1, at: .milliseconds(50)) == .microseconds(1), "a wait never falls short: rounded up")
    }

    @Test func aReadingEarlierThanTheLastEarnsNothing() {
        var bucket = TokenBucket(capacity: 1, refill: 1, every: .seconds(1))
        #expect(bucket.take(at: .seconds(10)) == nil)
        #expect(bucket.take(at: .seconds(5)) == .seconds(1), "time did not move forward")
        #expect(bucket.take(at: .seconds(11)) == nil, "a second after the latest reading")
    }

    @Test func onAManualClockTheBucketRefillsAsTheClockAdvances() async {
        let manual = ManualClock()
        let clock = MonotonicClock(manual)
        var bucket = TokenBucket(capacity: 1, refill: 4, every: .seconds(60))
        #expect(bucket.take(at: clock.now) == nil)
        #expect(bucket.take(at: clock.now) == .seconds(15))
        await manual.advance(by: .seconds(15))
        #expect(bucket.take(at: clock.now) == nil)
    }

    @Test func aBucketThatCannotRefillIsMadeSafe() {
        let bucket = TokenBucket(capacity: 0, refill: 0, every: .zero)
        #expect(bucket.capacity == 1 && bucket.refill == 1 && bucket.interval == .seconds(1))
    }
}

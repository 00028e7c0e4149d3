import ClientFoundation
import ClientUpdater
import Foundation
import Synchronization
import TestSupport
import Testing

/// The token bucket of the download rate cap, on clock readings the test gives, and the
/// shared limiter on a manual clock: no sleeping anywhere.
@Suite struct RateLimiterTests {
    private func rate(_ text: String) throws -> ByteRate { try #require(ByteRate(parsing: text)) }

    /// A transfer that reads `size` bytes in `chunk`-byte pieces, as fast as the bucket
    /// lets it: the time its waits add up to (the chunk's own transfer takes no time, the
    /// worst case for a cap), and the measured rate.
    private func transfer(_ size: Int64, chunk: Int, bucket: inout TokenBucket, late: Duration = .zero) -> (Duration, Double) {
        var now = Duration.zero
        var left = size
        while left > 0 {
            let piece = Int(min(Int64(chunk), left))
            left -= Int64(piece)
            let wait = bucket.take(piece, now: now)
            if wait > .zero { now += wait + late }
        }
        return (now, Double(size) / now.inSeconds)
    }

    @Test func theAverageOver50MBHoldsWithin5Percent() throws {
        let size: Int64 = 50_000_000
        for text in ["1MB/s", "5MB/s", "20MB/s", "100Mbit/s", "50MiB/s", "10GB/s"] {
            let cap = try rate(text)
            for chunk in [1024, 16 * 1024, 65_536, 1 << 20] {
                var bucket = TokenBucket(rate: cap)
                let (_, measured) = transfer(size, chunk: chunk, bucket: &bucket)
                let error = measured / Double(cap.bytesPerSecond) - 1
                #expect(error >= 0 && error <= 0.05, "\(text), \(chunk)-byte chunks: \(measured) B/s, error \(error)")
            }
        }
    }

    /// A wake-up that comes late (a loaded device) is credited back: the average stays at
    /// the cap instead of falling below it by the lateness.
    @Test func lateWakeUpsAreCreditedBack() throws {
        let cap = try rate("5MB/s")
        var bucket = TokenBucket(rate: cap)
        let (_, measured) = transfer(50_000_000, chunk: 65_536, bucket: &bucket, late: .milliseconds(2))
        let error = measured / Double(cap.bytesPerSecond) - 1
        #expect(abs(error) <= 0.05, "\(measured) B/s with 2 ms late wake-ups, error \(error)")
    }

    @Test func aFullBucketPassesItsBurstThenWaitsForTheDebt() throws {
        var bucket = TokenBucket(rate: try rate("1MB/s"), burst: 100_000)
        #expect(bucket.take(100_000, now: .zero) == .zero, "the burst passes at once")
        #expect(bucket.take(50_000, now: .zero) == .milliseconds(50), "50 kB of debt at 1 MB/s")
        #expect(bucket.take(0, now: .milliseconds(50)) == .zero, "paid back after the wait")
        #expect(bucket.take(1, now: .milliseconds(50)) == .microseconds(1))
    }

    @Test func idleTimeRefillsAtMostTheBurst() throws {
        var bucket = TokenBucket(rate: try rate("1MB/s"), burst: 100_000)
        _ = bucket.take(100_000, now: .zero)
        // An hour without a transfer (a pause, a backoff) earns one burst, not an hour's worth.
        #expect(bucket.take(100_000, now: .seconds(3600)) == .zero)
        #expect(bucket.take(100_000, now: .seconds(3600)) == .milliseconds(100))
    }

    @Test func aClockThatDoesNotMoveForwardEarnsNothing() throws {
        var bucket = TokenBucket(rate: try rate("1MB/s"), burst: 100_000)
        _ = bucket.take(100_000, now: .seconds(10))
        #expect(bucket.take(100_000, now: .seconds(5)) == .milliseconds(100), "an earlier reading adds no credit")
        #expect(bucket.take(0, now: .seconds(10) + .milliseconds(100)) == .zero)
    }

    @Test func theDefaultBurstIsSmall() throws {
        #expect(TokenBucket.defaultBurst(try rate("20MB/s")) == 1_000_000, "50 ms: 2 % of 50 MB")
        #expect(TokenBucket.defaultBurst(try rate("5MB/s")) == 250_000)
        #expect(TokenBucket.defaultBurst(try rate("1KiB/s")) == 16 * 1024, "at least 16 KiB")
        #expect(TokenBucket.defaultBurst(try rate("10GB/s")) == 1 << 20, "at most 1 MiB: 2.1 % of 50 MB")
    }

    /// A limiter is one cap: a resume (another request with the same limiter) inherits the
    /// debt of the request that was cut, instead of starting with a fresh bucket.
    @Test func aResumeContinuesUnderTheSameCap() async throws {
        let clock = ManualClock()
        let limiter = RateLimiter(rate: try rate("1MB/s"), clock: MonotonicClock(clock), burst: 100_000)
        #expect(limiter.delay(after: 300_000) == .milliseconds(200))
        // The connection broke here; the resume's first chunk comes at once.
        #expect(limiter.delay(after: 100_000) == .milliseconds(300), "the debt of the cut request is still owed")
        await clock.advance(by: .milliseconds(300))
        #expect(limiter.delay(after: 0) == .zero)
        #expect(limiter.accounting == RateLimiter.Accounting(bytes: 400_000, waited: .milliseconds(500)))
    }

    @Test func admitWaitsOnTheClockAndEndsWhenItMoves() async throws {
        let clock = ManualClock()
        let limiter = RateLimiter(rate: try rate("1MB/s"), clock: MonotonicClock(clock), burst: 100_000)
        try await limiter.admit(100_000)
        #expect(clock.sleeperCount == 0, "within the burst: no wait")
        let waiting = Task { try await limiter.admit(500_000) }
        try await clock.waitForSleeper()
        await clock.advance(by: .milliseconds(499))
        #expect(clock.sleeperCount == 1, "still 1 ms to wait")
        await clock.advance(by: .milliseconds(1))
        try await waiting.value
        #expect(limiter.accounting.waited == .milliseconds(500))
    }

    @Test func cancellingAWaitEndsIt() async throws {
        let clock = ManualClock()
        let limiter = RateLimiter(rate: try rate("1KiB/s"), clock: MonotonicClock(clock))
        let waiting = Task { try await limiter.admit(1 << 20) }
        try await clock.waitForSleeper()
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
    }

    @Test func theSettingMakesALimiterOrNone() {
        #expect(RateLimiter(setting: nil) == nil)
        #expect(RateLimiter(setting: "fast") == nil)
        #expect(RateLimiter(setting: "2MB/s")?.rate?.bytesPerSecond == 2_000_000)
        let one = RateLimiter(rate: ByteRate(bytesPerSecond: 5000))
        let other = RateLimiter(rate: ByteRate(bytesPerSecond: 5000))
        #expect(one == one && one != other, "requests share a cap only when they carry the same limiter")
    }

    /// A limiter that follows the device's setting takes a changed cap at the next
    /// download (``RateLimiter/refresh()``), keeps its debt when the cap is the same, and
    /// never waits once the cap is removed.
    @Test func aLimiterFollowsTheSettingAtEachRefresh() throws {
        let setting = Mutex<ByteRate?>(try rate("1MB/s"))
        let clock = ManualClock()
        let limiter = RateLimiter(clock: MonotonicClock(clock)) { setting.withLock { $0 } }
        #expect(limiter.rate?.bytesPerSecond == 1_000_000)
        _ = limiter.delay(after: 50_000)  // the burst
        #expect(limiter.delay(after: 100_000) == .milliseconds(100))
        limiter.refresh()
        #expect(limiter.delay(after: 0) == .milliseconds(100), "the same cap keeps its debt")

        setting.withLock { $0 = ByteRate(bytesPerSecond: 2_000_000) }
        #expect(limiter.rate?.bytesPerSecond == 1_000_000, "read only at a refresh")
        limiter.refresh()
        #expect(limiter.rate?.bytesPerSecond == 2_000_000)
        _ = limiter.delay(after: 100_000)  // a fresh bucket: its burst
        #expect(limiter.delay(after: 200_000) == .milliseconds(100))

        setting.withLock { $0 = nil }
        limiter.refresh()
        #expect(limiter.rate == nil)
        #expect(limiter.delay(after: 50_000_000) == .zero, "no cap: no wait")
        #expect(limiter.accounting.bytes == 50_450_000)
    }
}

import ClientFoundation
import FleetReports
import Foundation
import TestSupport
import Testing

@testable import FleetCollector

/// The collector's limits as pure state machines, on an injected clock (no sleeping).
@Suite struct LimitsTests {
    @Test func aBucketGrantsItsBurstThenOneTokenPerPeriod() {
        var bucket = RateLimiter.bucket(perMinute: 8)  // a burst of 2, one token every 7.5 s
        #expect(bucket.take(at: .zero) == nil)
        #expect(bucket.take(at: .zero) == nil)
        #expect(bucket.take(at: .zero) == .milliseconds(7500))
        #expect(bucket.take(at: .milliseconds(3750)) == .milliseconds(3750))
        #expect(bucket.take(at: .milliseconds(7500)) == nil)
        // Refill stops at the capacity.
        #expect(bucket.take(at: .seconds(100)) == nil)
        #expect(bucket.take(at: .seconds(100)) == nil)
        #expect(bucket.take(at: .seconds(100)) != nil)
    }

    @Test func theLimiterRemembersAtMostMaxKeys() async {
        let clock = ManualClock()
        let limiter = RateLimiter(
            limits: RateLimits(perAddressPerMinute: 4, perDevicePerMinute: 4, maxKeys: 3), clock: MonotonicClock(clock))
        let a = CollectorFixtures.deviceID(0)
        #expect(limiter.admit(device: a) == .allowed)
        #expect(limiter.admit(device: a) == .limited(retryAfterSeconds: 15))
        await clock.advance(by: .seconds(15))
        #expect(limiter.admit(device: a) == .allowed)
        for n in 0..<1000 { _ = limiter.admit(device: CollectorFixtures.deviceID(n + 1)) }
        #expect(limiter.remembered.devices == 3)
        // "a" was forgotten (least recently used): it comes back with a full bucket.
        #expect(limiter.admit(device: a) == .allowed)
        #expect(limiter.admit(address: "127.0.0.1") == .allowed)
        #expect(limiter.admit(address: "127.0.0.1") == .limited(retryAfterSeconds: 15))
    }

    @Test func theLRUEvictsTheLeastRecentlyUsed() {
        var lru = LRUBuckets(maxKeys: 2)
        let make = { TokenBucket(capacity: 1, refill: 1, every: .seconds(1)) }
        #expect(lru.take("a", now: .zero, make: make) == nil)
        #expect(lru.take("b", now: .zero, make: make) == nil)
        #expect(lru.take("a", now: .zero, make: make) != nil)  // a is used again: b is now the oldest
        #expect(lru.take("c", now: .zero, make: make) == nil)  // evicts b
        #expect(lru.take("a", now: .zero, make: make) != nil)  // a kept its empty bucket
        #expect(lru.take("b", now: .zero, make: make) == nil)  // b came back full
        #expect(lru.count == 2)
    }

    @Test func pruningIsDueHourlyWithTheRetentionCutoff() {
        var schedule = PruneSchedule(retentionDays: 90)
        let start = Date(timeIntervalSince1970: 1_764_090_000)
        #expect(schedule.due(at: start) == start.addingTimeInterval(-90 * 86_400))
        #expect(schedule.due(at: start.addingTimeInterval(3599)) == nil)
        #expect(schedule.due(at: start.addingTimeInterval(3600)) == start.addingTimeInterval(3600 - 90 * 86_400))
    }

    @Test func aZstdBombStopsAtTheLimit() throws {
        let bomb = [UInt8](CollectorFixtures.zstd(Data(count: 16 << 20)))
        #expect(throws: BoundedZstd.Failure.tooLarge) { try BoundedZstd.decompress(bomb, limit: ReportBatch.maxBytes) }
        let small = [UInt8](CollectorFixtures.zstd(Data("hello".utf8)))
        #expect(try BoundedZstd.decompress(small, limit: ReportBatch.maxBytes) == Array("hello".utf8))
        #expect(throws: BoundedZstd.Failure.self) { try BoundedZstd.decompress(Array(small.dropLast(2)), limit: 100) }
    }
}

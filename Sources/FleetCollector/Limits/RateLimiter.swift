import ClientFoundation
import DeviceIdentity
import Synchronization

/// How fast one source address and one device id may send batches.
public struct RateLimits: Sendable, Equatable {
    /// Batches a minute from one source address (a NAT may hide many devices behind one).
    public var perAddressPerMinute: Double
    /// Batches a minute from one device id.
    public var perDevicePerMinute: Double
    /// The most addresses and device ids remembered (each); the least recently seen are forgotten.
    public var maxKeys: Int

    /// The limits of a collector started without `--rate-per-address`/`--rate-per-device`.
    public static let standard = RateLimits(perAddressPerMinute: 6000, perDevicePerMinute: 60, maxKeys: 100_000)

    /// Limits.
    public init(perAddressPerMinute: Double, perDevicePerMinute: Double, maxKeys: Int) {
        self.perAddressPerMinute = perAddressPerMinute
        self.perDevicePerMinute = perDevicePerMinute
        self.maxKeys = maxKeys
    }
}

/// The collector's flood guard: one token bucket (ClientFoundation's ``TokenBucket``) per source address and one per device id,
/// each holding a quarter of a minute's allowance as its burst. Time comes from the injected
/// monotonic clock, so tests drive it with a manual clock, without sleeping.
public final class RateLimiter: Sendable {
    /// What a limiter decided: go on, or wait this many seconds.
    public enum Verdict: Sendable, Equatable {
        case allowed
        case limited(retryAfterSeconds: Int)
    }

    let limits: RateLimits
    let clock: MonotonicClock
    private let addresses: Mutex<LRUBuckets>
    private let devices: Mutex<LRUBuckets>

    /// A limiter on `limits`, reading the time from `clock`.
    public init(limits: RateLimits, clock: MonotonicClock = .continuous) {
        self.limits = limits
        self.clock = clock
        addresses = Mutex(LRUBuckets(maxKeys: limits.maxKeys))
        devices = Mutex(LRUBuckets(maxKeys: limits.maxKeys))
    }

    /// One batch from `address`.
    public func admit(address: String) -> Verdict {
        let t = clock.now
        let rate = limits.perAddressPerMinute
        return Self.verdict(addresses.withLock { $0.take(address, now: t, make: { Self.bucket(perMinute: rate) }) })
    }

    /// One batch from `device`.
    public func admit(device: DeviceID) -> Verdict {
        let t = clock.now
        let rate = limits.perDevicePerMinute
        return Self.verdict(devices.withLock { $0.take(device.text, now: t, make: { Self.bucket(perMinute: rate) }) })
    }

    /// Keys remembered now (addresses, devices): never more than ``RateLimits/maxKeys`` each.
    public var remembered: (addresses: Int, devices: Int) {
        (addresses.withLock { $0.count }, devices.withLock { $0.count })
    }

    /// A full bucket of a quarter of `perMinute`, earning `perMinute` tokens a minute.
    static func bucket(perMinute: Double) -> TokenBucket {
        TokenBucket(capacity: (perMinute / 4).rounded(.down), refill: perMinute, every: .seconds(60))
    }

    /// Allowed, or the wait rounded up to whole seconds (at least one) for `Retry-After`.
    static func verdict(_ wait: Duration?) -> Verdict {
        guard let wait else { return .allowed }
        return .limited(retryAfterSeconds: max(1, Int(min(wait.inSeconds, 1e9).rounded(.up))))
    }
}

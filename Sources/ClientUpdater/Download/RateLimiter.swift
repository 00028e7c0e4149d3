import ClientFoundation
import Foundation
import Synchronization

/// The download rate cap's use of ClientFoundation's one ``TokenBucket``: one token a byte,
/// refilled at the cap every second, so a transfer waits before it takes its next bytes
/// and, on average, no more than the cap passes.
///
/// The bytes just received are spent at once (``take(_:now:)``), leaving the bucket in
/// debt, and the wait is the time the rate needs to pay the debt back. Time that passed
/// without a transfer (a pause, a retry's backoff) refills at most the burst, so a resume
/// never starts with a rush; time lost to a late wake-up is credited back, so oversleeping
/// does not slow the average below the cap.
extension TokenBucket {
    /// The default capacity for `rate`: 50 ms of it, from 16 KiB to 1 MiB. The full bucket
    /// a transfer starts with is the only excess over the cap, so over a 50 MB archive the
    /// average is at most 2.1 % above it at any rate (at 20 MB/s 1 MB, 2 %; at 5 MB/s
    /// 250 kB, 0.5 %), while 50 ms of credit absorbs a late wake-up.
    package static func defaultBurst(_ rate: ByteRate) -> Int64 {
        min(max(rate.bytesPerSecond / 20, 16 * 1024), 1024 * 1024)
    }

    /// A full bucket of `burst` bytes (``defaultBurst(_:)`` when `nil`) for `rate`.
    package init(rate: ByteRate, burst: Int64? = nil) {
        self.init(capacity: Double(max(1, burst ?? Self.defaultBurst(rate))), refill: Double(rate.bytesPerSecond), every: .seconds(1))
    }

    /// The rate the average holds to, in bytes a second.
    package var bytesPerSecond: Int64 { Int64(refill) }

    /// Takes `bytes` just received at `now` (the clock's reading) and says how long to wait
    /// before receiving more: zero while the bucket has credit.
    package mutating func take(_ bytes: Int, now: Duration) -> Duration {
        spend(Double(max(0, bytes)), at: now)
    }
}

/// The rate cap of one device's downloads (its `downloadRate` setting), shared by every
/// request that carries it (``TransportRequest/rateLimiter``): one download, its retries
/// and its `Range` resumes, and the parallel downloads of one check, all stay under the one
/// cap together.
///
/// A transport that moves network bytes calls ``admit(_:)`` after each body chunk and
/// before it reads the next one, so while it waits the socket is not read and TCP's flow
/// control slows the sender; nothing is read ahead and held in memory. Waits are on the
/// injected `MonotonicClock`, so tests drive them without sleeping.
public final class RateLimiter: Sendable, Equatable {
    private let clock: MonotonicClock
    private let burst: Int64?
    /// Where a limiter that follows a setting reads it (``refresh()``); `nil`: a fixed cap.
    private let setting: (@Sendable () -> ByteRate?)?
    private let state: Mutex<State>

    private struct State {
        /// `nil`: no cap (a setting that was removed).
        var bucket: TokenBucket?
        var bytes: Int64 = 0
        var asked: Duration = .zero
    }

    /// What the limiter has seen: for tests, benches and logs.
    public struct Accounting: Sendable, Equatable {
        /// Bytes admitted.
        public var bytes: Int64
        /// The waits it asked for, added up.
        public var waited: Duration

        public init(bytes: Int64, waited: Duration) {
            self.bytes = bytes
            self.waited = waited
        }
    }

    /// A limiter for `rate`, waiting on `clock`; `burst` is the bucket's capacity in bytes
    /// (by default `TokenBucket.defaultBurst(_:)`: 50 ms of the rate, from 16 KiB to 1 MiB).
    public init(rate: ByteRate, clock: MonotonicClock = .continuous, burst: Int64? = nil) {
        self.clock = clock
        self.burst = burst
        setting = nil
        state = Mutex(State(bucket: TokenBucket(rate: rate, burst: burst)))
    }

    /// A limiter that follows a setting: `setting` is read now and again by ``refresh()``
    /// (at the start of each download), so a cap changed while the device runs
    /// (`clientctl download set` under `serve`) applies from the next download; `nil` from
    /// it: no cap (the limiter then never waits).
    public init(clock: MonotonicClock = .continuous, following setting: @escaping @Sendable () -> ByteRate?) {
        self.clock = clock
        burst = nil
        self.setting = setting
        state = Mutex(State(bucket: setting().map { TokenBucket(rate: $0) }))
    }

    /// The limiter of a device's `downloadRate` setting (a `ByteRate` text); `nil` for no
    /// setting or for a text that does not read (settings are checked when they are written).
    public convenience init?(setting: String?, clock: MonotonicClock = .continuous) {
        guard let setting, let rate = ByteRate(parsing: setting) else { return nil }
        self.init(rate: rate, clock: clock)
    }

    /// The cap now; `nil`: none.
    public var rate: ByteRate? {
        state.withLock { $0.bucket.map { ByteRate(bytesPerSecond: $0.bytesPerSecond) } }
    }

    /// Reads the setting again (a limiter made with `following:`; a fixed one ignores it).
    /// A new rate starts a new bucket; the same rate keeps the bucket and its debt, so a
    /// resume still owes what the cut request owed.
    public func refresh() {
        guard let setting else { return }
        let rate = setting()
        state.withLock { state in
            guard rate?.bytesPerSecond != state.bucket?.bytesPerSecond else { return }
            state.bucket = rate.map { TokenBucket(rate: $0, burst: burst) }
        }
    }

    /// How long to wait after `bytes` arrived now (the bytes are counted).
    public func delay(after bytes: Int) -> Duration {
        let now = clock.now
        return state.withLock { state in
            let wait = state.bucket?.take(bytes, now: now) ?? .zero
            state.bytes += Int64(max(0, bytes))
            state.asked += wait
            return wait
        }
    }

    /// Counts `bytes` just received and suspends as long as the cap needs before more may
    /// be read (not at all without a cap). Throws `CancellationError` when the task is
    /// cancelled while waiting.
    public func admit(_ bytes: Int) async throws {
        let wait = delay(after: bytes)
        if wait > .zero { try await clock.sleep(for: wait) }
    }

    /// Bytes admitted and waits asked for so far.
    public var accounting: Accounting {
        state.withLock { Accounting(bytes: $0.bytes, waited: $0.asked) }
    }

    /// Two requests share a cap when they carry the same limiter.
    public static func == (lhs: RateLimiter, rhs: RateLimiter) -> Bool { lhs === rhs }
}

import ClientFoundation
import Foundation

/// When a device's periodic update checks run (docs/guides/running-devices.md#periodic-checks):
/// every interval, spread by ±10 % so that a fleet started together does not check together,
/// and never sooner than the feed asked with `Retry-After`.
///
/// The spread is seeded by the device (its id): one device's delays differ from check to
/// check and from every other device's, and are the same on every run of the same device, so
/// a test or an operator can reproduce them. Pure: the agent sleeps, this decides how long.
package struct CheckSchedule: Sendable, Equatable {
    /// The interval between checks, before the spread.
    package let interval: Duration
    /// The device's seed: the first 8 bytes of the SHA-256 of its id.
    package let seed: UInt64

    /// The spread: a delay is the interval times 1 ± this.
    package static let spread = 0.1
    /// The longest `Retry-After` honoured (a longer one is read as this): a feed cannot put
    /// a device to sleep for more than a day, or for more than its interval when that is longer.
    package static let retryAfterCap: Duration = .seconds(86_400)

    /// - Parameters:
    ///   - interval: the interval (more than 0).
    ///   - device: what tells this device apart (its device id; the root's path when it has none).
    package init(every interval: Duration, device: String) {
        self.interval = interval
        let digest = Digest.hex(.sha256, of: Data(device.utf8))
        seed = UInt64(digest.prefix(16), radix: 16) ?? 0
    }

    /// The wait before check number `check` (1 is the first periodic check): the interval
    /// spread by this device's factor for that check, or the feed's `Retry-After` (capped)
    /// when that is longer.
    package func delay(before check: Int, retryAfter: Duration? = nil) -> Duration {
        let factor = 1 + Self.spread * (2 * unit(check) - 1)
        let spread = interval * factor
        guard let retryAfter else { return spread }
        let cap = max(Self.retryAfterCap, interval)
        return max(spread, min(retryAfter, cap))
    }

    /// The wait before check number `check` after a check whose download was deferred until
    /// `until` (docs/download-policy.md): the device checks again at that moment, plus its
    /// own share of a tenth of the interval (so a site whose window opens together does not
    /// download together), but never later than ``delay(before:retryAfter:)`` would.
    package func delay(before check: Int, retryAfter: Duration? = nil, deferredUntil until: Date, now: Date) -> Duration {
        let usual = delay(before: check, retryAfter: retryAfter)
        let away = Duration.seconds(clamping: max(0, until.timeIntervalSince(now)))
        let share = interval * (Self.spread * unit(check))
        return min(usual, max(away + share, .seconds(1)))
    }

    /// A number in [0, 1) for `check`, from the seed (SplitMix64: well spread for
    /// consecutive inputs, the same on every platform).
    func unit(_ check: Int) -> Double {
        var z = seed &+ UInt64(truncatingIfNeeded: check) &* 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Double(z >> 11) / Double(UInt64(1) << 53)
    }
}

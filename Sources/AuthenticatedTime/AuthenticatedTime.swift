import Foundation

/// The result of a quorum of Roughtime servers, small enough for a device to persist: the
/// interval the true time was in, when it was obtained on both clocks, and who agreed.
public struct AuthenticatedTime: Sendable, Hashable, Codable {
    /// The true time was not before this at ``obtainedAt``.
    public var earliest: Date
    /// The true time was not after this at ``obtainedAt``.
    public var latest: Date
    /// The device's clocks when the interval was decided.
    public var obtainedAt: ClockReading
    /// The servers whose answers agree (`roughtime://HOST:PORT`).
    public var agreeing: [String]
    /// One line per answer outvoted (`time server X says 2031-…, ± 3 s: outvoted by 2 of 3`).
    public var outvoted: [String]
    /// One line per server without a verified answer (timed out, failed to verify).
    public var failed: [String]
    /// The decision in full, for `status`: who answered, the sets that overlap, who was
    /// outvoted or failed and why (nil in a value made by hand or read from an older file).
    package var tally: RoughtimeTally?

    /// A result.
    public init(earliest: Date, latest: Date, obtainedAt: ClockReading, agreeing: [String], outvoted: [String] = [], failed: [String] = []) {
        self.earliest = earliest
        self.latest = latest
        self.obtainedAt = obtainedAt
        self.agreeing = agreeing
        self.outvoted = outvoted
        self.failed = failed
    }

    /// The middle of the interval.
    public var midpoint: Date { earliest + latest.timeIntervalSince(earliest) / 2 }

    /// The interval carried forward to `reading` on the monotonic clock: shifted by the
    /// uptime elapsed since ``obtainedAt``. Nil in another boot (uptimes do not compare), on
    /// a system without a boot id (the boot is unknown) or before it was obtained.
    public func interval(at reading: ClockReading) -> ClosedRange<Date>? {
        guard !obtainedAt.bootID.isEmpty, reading.bootID == obtainedAt.bootID, reading.uptime >= obtainedAt.uptime else { return nil }
        let elapsed = reading.uptime - obtainedAt.uptime
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return (earliest + seconds)...(latest + seconds)
    }

    /// The time to decide by at `reading`: its wall clock when inside the interval carried
    /// forward, else the nearest end of the interval (clientctl never sets the system clock;
    /// it decides by this). The wall clock as is when the interval does not apply (another boot).
    public func correctedTime(at reading: ClockReading) -> Date {
        guard let interval = interval(at: reading) else { return reading.wall }
        return min(max(reading.wall, interval.lowerBound), interval.upperBound)
    }
}

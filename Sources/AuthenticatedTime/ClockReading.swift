import ClientFoundation
import Foundation

/// The device's two clocks read at one moment: the wall clock (which may be wrong) and the
/// monotonic clock since boot (`CLOCK_BOOTTIME`, what `ContinuousClock` counts on Linux,
/// suspend included), with the boot it belongs to. Persisted with an ``AuthenticatedTime``
/// so the interval can be carried forward on the monotonic clock later in the same boot.
public struct ClockReading: Sendable, Hashable, Codable {
    /// The wall clock (`Date()`).
    public var wall: Date
    /// Time since boot on `CLOCK_BOOTTIME`.
    public var uptime: Duration
    /// `/proc/sys/kernel/random/boot_id`: uptimes compare only within one boot.
    public var bootID: String

    /// A reading.
    public init(wall: Date, uptime: Duration, bootID: String) {
        self.wall = wall
        self.uptime = uptime
        self.bootID = bootID
    }

    /// The clocks now: the boot clock through ClientFoundation's `BootInstant` (the one
    /// reader of `CLOCK_BOOTTIME` and the boot id), the wall clock right after it. A system
    /// without a boot id reads as an empty one, whose uptimes a later reading does not trust
    /// (``AuthenticatedTime/interval(at:)`` compares boot ids).
    public static func now() -> ClockReading {
        let boot = BootInstant.now()
        return ClockReading(wall: Date(), uptime: boot.uptime, bootID: boot.bootID ?? "")
    }
}

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

    /// The clocks now.
    public static func now() -> ClockReading {
        var spec = timespec()
        clock_gettime(CLOCK_BOOTTIME, &spec)
        return ClockReading(wall: Date(), uptime: .seconds(spec.tv_sec) + .nanoseconds(spec.tv_nsec), bootID: bootID)
    }

    /// This boot's id, read once (a procfs read, which does not wait on a disk).
    static let bootID: String = {
        let text = (try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8)) ?? ""
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }()
}

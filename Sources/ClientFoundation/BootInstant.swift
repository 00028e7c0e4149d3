import Foundation

/// A moment on the clock that every process of one boot shares: time since boot on
/// `CLOCK_BOOTTIME` (suspend included; no setting of the system's time moves it), with the
/// boot it belongs to. What a duration measured across processes is measured on (a trial
/// started by `clientctl reload` and judged by the next command): two instants compare only
/// within one boot.
public struct BootInstant: Sendable, Hashable {
    /// `/proc/sys/kernel/random/boot_id`; nil where the system has none.
    public var bootID: String?
    /// Time since boot on `CLOCK_BOOTTIME`.
    public var uptime: Duration

    /// An instant.
    public init(bootID: String?, uptime: Duration) {
        self.bootID = bootID
        self.uptime = uptime
    }

    /// The clock now.
    public static func now() -> BootInstant {
        var spec = timespec()
        clock_gettime(CLOCK_BOOTTIME, &spec)
        return BootInstant(bootID: Platform.bootID(), uptime: .seconds(spec.tv_sec) + .nanoseconds(spec.tv_nsec))
    }

    /// The time from `earlier` to this instant; nil when they belong to different boots (or
    /// either boot is unknown), or `earlier` is later.
    public func since(_ earlier: BootInstant) -> Duration? {
        guard let boot = bootID, boot == earlier.bootID, uptime >= earlier.uptime else { return nil }
        return uptime - earlier.uptime
    }
}

import Foundation

/// One version's errors after start (`page-errors` reports) over its devices: the figures
/// `fleet status` shows and the rollout guard judges (docs/page-errors.md#in-the-fleet).
///
/// Each device's use counts for at most the window's length when the sums are of a window
/// (``init(devices:maxDeviceMs:)``): the collector's summary bounds it so.
///
/// Two rates, from the same per-device sums:
/// - ``errorsPerDeviceHour``: all problems over all hours of use, what `ERRORS/DEV-H` shows;
/// - ``mean`` and ``sd``: of each device's own rate, capped at ``maxDeviceRate``, over the
///   devices with at least ``minDeviceHours`` of use. The guard's bounds come from these:
///   every device weighs the same, so one device (a stolen key, a page stuck throwing 10,000
///   times a second) moves the mean by at most ``maxDeviceRate`` over the device count, and
///   its spread widens the bound instead of tipping it.
public struct ErrorFigures: Sendable, Equatable, Codable {
    /// A device counts in ``mean`` once it used the version this long (5 minutes: the first
    /// `page-errors` report of a version covers its first 5 minutes of use).
    public static let minDeviceHours = 5.0 / 60
    /// A device's rate counts at most this (one problem a minute): a page broken harder than
    /// that is broken, and the cap bounds what one device can weigh.
    public static let maxDeviceRate = 60.0

    /// Devices with at least ``minDeviceHours`` of use of the version.
    public var devices: Int
    /// Problems reported, all devices.
    public var errors: Int64
    /// Hours of use reported, all devices.
    public var hours: Double
    /// `errors / hours` (nil without use).
    public var errorsPerDeviceHour: Double?
    /// The mean of the counted devices' capped rates (nil without a counted device).
    public var mean: Double?
    /// Their sample standard deviation (nil with fewer than two).
    public var sd: Double?

    /// Figures as they are.
    public init(devices: Int, errors: Int64, hours: Double, errorsPerDeviceHour: Double?, mean: Double?, sd: Double?) {
        self.devices = devices
        self.errors = errors
        self.hours = hours
        self.errorsPerDeviceHour = errorsPerDeviceHour
        self.mean = mean
        self.sd = sd
    }

    /// The figures of devices' sums: each element one device's problems and milliseconds of
    /// use of the version (negative values count as zero).
    /// - Parameter maxDeviceMs: the most use one device counts for (the window the sums are
    ///   of: no device uses a version longer than the window holds, so one that claims more,
    ///   a broken or a lying one, cannot thin out every device's problems); nil: no bound.
    public init<S: Sequence>(devices sums: S, maxDeviceMs: Int64? = nil) where S.Element == (errors: Int64, ms: Int64) {
        var errors: Int64 = 0
        var ms: Double = 0
        var rates: [Double] = []
        for (e, m) in sums {
            let e = max(0, e)
            let m = min(max(0, m), max(0, maxDeviceMs ?? Int64.max))
            let hours = Double(m) / 3_600_000
            errors = errors.addingReportingOverflow(e).overflow ? Int64.max : errors + e
            ms += Double(m)
            if hours >= Self.minDeviceHours { rates.append(min(Double(e) / hours, Self.maxDeviceRate)) }
        }
        let hours = ms / 3_600_000
        let n = Double(rates.count)
        let mean = rates.isEmpty ? nil : rates.reduce(0, +) / n
        var sd: Double?
        if let mean, rates.count > 1 {
            sd = (rates.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / (n - 1)).squareRoot()
        }
        self.init(
            devices: rates.count, errors: errors, hours: hours, errorsPerDeviceHour: hours > 0 ? Double(errors) / hours : nil,
            mean: mean, sd: sd)
    }

    /// The two-sided normal bounds of the mean rate at quantile `z` (nil without a counted
    /// device), never below 0. The upper bound is at least the rate of three problems over the
    /// hours of use (the Poisson bound of seeing none), so a version that reported no problem
    /// yet still bounds its rate above zero.
    public func bounds(z: Double = 1.96) -> (lower: Double, upper: Double)? {
        guard let mean, devices > 0 else { return nil }
        let half = z * (sd ?? Self.maxDeviceRate) / Double(devices).squareRoot()
        let floor = hours > 0 ? 3 / hours : Self.maxDeviceRate
        return (max(0, mean - half), max(mean + half, floor))
    }
}

import Foundation

/// The range of every value of ``DeviceConfig``, checked at `init` (exit 64) and at every
/// load (exit 78), so no value in `config.json` can crash a command.
extension DeviceConfig {
    /// Startup timeout: more than 0, at most one day.
    package static let startupTimeoutRange: ClosedRange<Double> = Double.leastNonzeroMagnitude...86_400
    /// Update-check interval of `serve` when not 0 (0 = only on request): 1 s to 7 days.
    package static let checkIntervalRange: ClosedRange<Double> = 1...604_800
    /// Retention: 1 to 1,000 versions.
    package static let keepRange: ClosedRange<Int> = 1...1_000
    /// Unpacked bytes and archive bytes: 1 byte to 1 TiB.
    package static let byteLimitRange: ClosedRange<Int64> = 1...(1 << 40)
    /// Entries in one archive: 1 to 10,000,000.
    package static let entryLimitRange: ClosedRange<Int> = 1...10_000_000

    /// The first core value that is out of range or breaks a rule, as `name: why`; nil
    /// when the core's part of the config is usable (the channel checks its own section:
    /// ``ChannelSettings/problem(in:)``).
    package func problem() -> String? {
        if app.isEmpty || app.utf8.count > 128 { return "app must be 1 to 128 bytes" }
        if !(startupTimeoutSeconds.isFinite && Self.startupTimeoutRange.contains(startupTimeoutSeconds)) {
            return "startupTimeoutSeconds \(startupTimeoutSeconds) is out of range (more than 0, at most 86400 seconds)"
        }
        if !Self.keepRange.contains(keep) { return "keep \(keep) is out of range (1…1000)" }
        for (name, value) in [("maxUnpackedBytes", limits.maxUnpackedBytes), ("maxArchiveBytes", limits.maxArchiveBytes)]
        where !Self.byteLimitRange.contains(value) {
            return "limits.\(name) \(value) is out of range (1…\(Self.byteLimitRange.upperBound))"
        }
        if !Self.entryLimitRange.contains(limits.maxEntries) {
            return "limits.maxEntries \(limits.maxEntries) is out of range (1…10000000)"
        }
        if let reportURL, let problem = Self.reportURLProblem(reportURL, allowInsecureHTTP: allowInsecureHTTP) {
            return "reportURL \(problem)"
        }
        return nil
    }
}

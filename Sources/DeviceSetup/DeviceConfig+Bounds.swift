import Foundation

/// The range of every value of ``DeviceConfig`` (its ``DeviceSettings`` have their own), checked at `init` (exit 64) and at every
/// load (exit 78), so no value in `config.json` can crash a command.
extension DeviceConfig {
    /// Update-check interval of `serve` when not 0 (0 = only on request): 1 s to 7 days.
    package static let checkIntervalRange: ClosedRange<Double> = 1...604_800
    /// Unpacked bytes and archive bytes: 1 byte to 1 TiB.
    package static let byteLimitRange: ClosedRange<Int64> = 1...(1 << 40)
    /// Entries in one archive: 1 to 10,000,000.
    package static let entryLimitRange: ClosedRange<Int> = 1...10_000_000

    /// The first core value that is out of range or breaks a rule, as `name: why`; nil
    /// when the core's part of the config is usable (the channel checks its own section:
    /// ``ChannelSettings/problem(in:)``).
    package func problem() -> String? {
        if app.isEmpty || app.utf8.count > 128 { return "app must be 1 to 128 bytes" }
        for (name, value) in [("maxUnpackedBytes", limits.maxUnpackedBytes), ("maxArchiveBytes", limits.maxArchiveBytes)]
        where !Self.byteLimitRange.contains(value) {
            return "limits.\(name) \(value) is out of range (1…\(Self.byteLimitRange.upperBound))"
        }
        if !Self.entryLimitRange.contains(limits.maxEntries) {
            return "limits.maxEntries \(limits.maxEntries) is out of range (1…10000000)"
        }
        return deviceSettings.problem(allowInsecureHTTP: allowInsecureHTTP)
    }
}

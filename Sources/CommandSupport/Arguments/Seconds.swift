import ArgumentParser
import ClientFoundation
import DeviceSetup

/// A duration given on the command line in seconds: a finite decimal number, 0 or more
/// (`inf`, `nan` and negative values are refused while parsing, exit 64). Commands check
/// their own range in `validate()`.
package struct Seconds: ExpressibleByArgument, Sendable, Equatable, CustomStringConvertible {
    package var value: Double

    package init(_ value: Double) {
        self.value = value
    }

    package init?(argument: String) {
        guard let value = Double(argument), value.isFinite, value >= 0 else { return nil }
        self.value = value
    }

    package var description: String {
        value == value.rounded() && value < 1e15 ? String(Int64(value)) : String(value)
    }

    package var defaultValueDescription: String { description }

    /// The value as a `Duration` (rounded to the millisecond), as every API takes it: an
    /// option stays a number of seconds on the command line and becomes a duration here.
    package var duration: Duration { .seconds(clamping: value) }

    /// Throws a `ValidationError` naming `flag` unless the value is in `range`.
    package func require(in range: ClosedRange<Double>, flag: String, rule: String) throws {
        guard range.contains(value) else { throw ValidationError("\(flag) \(description) is out of range: \(rule)") }
    }
}

extension Seconds {
    /// `--startup-timeout`: more than 0, at most a day.
    package func requireStartupTimeout() throws {
        try require(in: DeviceSettings.startupTimeoutRange, flag: "--startup-timeout", rule: "more than 0, at most 86400 seconds")
    }
}

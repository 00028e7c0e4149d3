import ClientFoundation
/// Durations as operators write them (`48h`, `90m`, `2d`, `3600s`, `1d12h`, `3600`) and as status lines show them
/// (`1d 12h`).
///
/// Accepted text: either plain decimal seconds (`3600`), or one or more `<digits><unit>` parts with units `d` (day =
/// 86400 s), `h`, `m`, `s`, largest unit first and each unit at most once (`1d12h`, `2h30m`, `90m`, `1h3600s`).
/// Only ASCII digits and lowercase units; no spaces, signs or fractions. Zero (`0`, `0s`) is accepted here; callers
/// that need a positive duration check that themselves. At most 365 days (``maximumSeconds``).
package enum DurationText {
    /// The longest accepted duration: 365 days, in seconds.
    package static let maximumSeconds = 365 * 86_400

    /// A short reminder of the accepted forms, for the end of messages.
    package static let examples = "e.g. 48h, 90m, 2d, 1d12h, or plain seconds 3600"

    /// Parses duration text into whole seconds.
    ///
    /// - Parameters:
    ///   - text: the duration text, exactly as typed.
    ///   - field: what the value is, for the message (e.g. `apply grace`).
    /// - Throws: ``ApplyPolicyError`` with code `.invalidDuration` for empty, negative, malformed, unknown units,
    ///   misordered or repeated units, and anything longer than 365 days (including values that would overflow).
    package static func seconds(parsing text: String, field: String) throws -> Int {
        func refuse(_ reason: String) -> ApplyPolicyError {
            ApplyPolicyError(code: .invalidDuration, message: "\(field) \(Quoting.quoted(text)) \(reason)")
        }
        if text.isEmpty {
            throw refuse("is empty (\(examples))")
        }
        if text.hasPrefix("-") {
            throw refuse("is negative (durations are 0 or more, \(examples))")
        }
        let units: [(symbol: Unicode.Scalar, seconds: Int)] = [("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1)]
        var total = 0
        var tooLong = false
        var number: Int?
        var nextUnitIndex = 0
        for scalar in text.unicodeScalars {
            if let digit = Self.digitValue(scalar) {
                let current = number ?? 0
                // Once a number alone exceeds the maximum it can only be refused; stop accumulating (no overflow).
                if current > maximumSeconds {
                    tooLong = true
                    number = current
                } else {
                    number = current * 10 + digit
                }
                continue
            }
            guard let unitIndex = units.firstIndex(where: { $0.symbol == scalar }) else {
                if scalar.properties.isAlphabetic {
                    throw refuse("has unknown unit \(Quoting.quoted(String(scalar))) (units are d, h, m, s; \(examples))")
                }
                throw refuse("has unexpected character \(Quoting.quoted(String(scalar))) (\(examples), no spaces or signs)")
            }
            guard let value = number else {
                throw refuse("has unit \(Quoting.quoted(String(scalar))) without a number before it (\(examples))")
            }
            guard unitIndex >= nextUnitIndex else {
                throw refuse("repeats a unit or lists units out of order (largest first, each once: d, h, m, s; e.g. 1d12h)")
            }
            nextUnitIndex = unitIndex + 1
            if value > maximumSeconds {
                tooLong = true
            } else {
                total += value * units[unitIndex].seconds
                if total > maximumSeconds {
                    tooLong = true
                }
            }
            number = nil
        }
        if let trailing = number {
            if nextUnitIndex > 0 {
                throw refuse("ends in a number without a unit (give every part a unit, e.g. 1d12h)")
            }
            if trailing > maximumSeconds {
                tooLong = true
            } else {
                total = trailing
            }
        }
        if tooLong || total > maximumSeconds {
            throw refuse("is longer than 365d (use at most 365d)")
        }
        return total
    }

    /// Renders seconds for status lines: days, hours, minutes and seconds that are not zero, largest first, separated
    /// by spaces (`129600` → `1d 12h`, `5400` → `1h 30m`, `86405` → `1d 5s`, `0` → `0s`). Negative values get a
    /// leading `-` (`-90` → `-1m 30s`).
    package static func render(seconds: Int) -> String {
        var rest = seconds.magnitude
        var parts: [String] = []
        for (symbol, size) in [("d", UInt(86_400)), ("h", 3_600), ("m", 60), ("s", 1)] {
            let count = rest / size
            rest %= size
            if count > 0 {
                parts.append("\(count)\(symbol)")
            }
        }
        if parts.isEmpty {
            return "0s"
        }
        return (seconds < 0 ? "-" : "") + parts.joined(separator: " ")
    }

    /// The value of an ASCII decimal digit, or nil for anything else (including non-ASCII digits).
    private static func digitValue(_ scalar: Unicode.Scalar) -> Int? {
        guard scalar.value >= 0x30, scalar.value <= 0x39 else {
            return nil
        }
        return Int(scalar.value - 0x30)
    }
}

import ClientFoundation
import Foundation

/// A daily maintenance window of a device: a start and an end local wall-clock time in an IANA time zone.
///
/// **Text forms.** Operators type `HH:MM-HH:MM` (two-digit hours 00–24 and minutes 00–59; `24:00` only as the
/// end), optionally followed by `@Zone`; the zone can also come separately (``init(parsing:timeZone:defaultZone:)``).
/// Stored and JSON form (``encoded``, `Codable` as a single string): `HH:MM-HH:MM@Zone`, e.g.
/// `"02:00-04:00@Europe/Berlin"`. The status form (``description``) is `02:00–04:00 Europe/Berlin`.
/// Refused: malformed text, minutes over 59, hours over 24, `24:MM` other than `24:00`, `24:00` as the start, a
/// start equal to the end; `00:00-24:00` is the whole day. A window whose end is before its start (`22:00-02:00`)
/// crosses midnight. Zones: see ``acceptedTimeZone(_:)``.
///
/// **Semantics: pure wall-clock rule.** An instant is inside when its local wall-clock time in the window's zone
/// (at second resolution) is in [start, end) — for a window crossing midnight, ≥ start or < end. Nothing else is
/// considered, which has these consequences on daylight-saving days:
/// - Spring forward: local times that do not exist are never inside. Europe/Berlin, 2026-03-29, 02:00 CET jumps to
///   03:00 CEST at 01:00Z: `02:00-04:00` is open only 03:00–04:00 local (01:00Z–02:00Z, one hour of real time);
///   `02:15-02:45` does not open that day at all (next opening 2026-03-30 02:15 CEST = 00:15Z).
/// - Fall back: the repeated local hour is inside twice. America/New_York, 2026-11-01, 02:00 EDT falls back to
///   01:00 EST at 06:00Z: `01:00-02:00` is open 05:00Z–07:00Z (two hours of real time); `00:30-01:30` is open
///   04:30Z–05:30Z and again 06:00Z–06:30Z. That second opening is intended: the window is "whenever the clock on
///   the wall shows 00:30–01:30", and a device that switched in the first part will not switch again.
/// - A window crossing midnight on a DST night follows the same rule (Berlin `23:00-03:00` on 2026-03-28/29 is open
///   22:00Z–01:00Z, three hours; on 2026-10-24/25 it is open 21:00Z–02:00Z, five hours).
///
/// Local time is derived from the window's own zone only (`TimeZone.secondsFromGMT(for:)`, the data behind a
/// `Calendar(identifier: .gregorian)` in that zone), never from the process's current zone.
package struct MaintenanceWindow: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Start, in minutes after local midnight: 0…1439.
    package let startMinute: Int
    /// End, in minutes after local midnight: 0…1440 (1440 is `24:00`), never equal to ``startMinute``. When it is
    /// less than ``startMinute`` the window crosses midnight.
    package let endMinute: Int
    /// The zone's identifier as given (e.g. `Europe/Berlin`, `UTC`); this is what ``encoded`` writes.
    package let timeZoneIdentifier: String
    /// The zone the wall-clock times are read in.
    package let timeZone: TimeZone

    /// The shape of window text, for messages.
    private static let shape = "HH:MM-HH:MM (00:00–24:00, e.g. 02:00-04:00)"

    /// Creates a window from minutes after local midnight and a zone identifier.
    ///
    /// - Throws: ``ApplyPolicyError`` `.invalidWindow` when `startMinute` is outside 0…1439, `endMinute` outside
    ///   0…1440 or both are equal; `.invalidTimeZone` as ``acceptedTimeZone(_:)``.
    package init(startMinute: Int, endMinute: Int, timeZoneIdentifier: String) throws {
        let text = "\(MaintenanceWindow.clock(startMinute))-\(MaintenanceWindow.clock(endMinute))"
        guard (0...1439).contains(startMinute), (0...1440).contains(endMinute) else {
            throw ApplyPolicyError(code: .invalidWindow, message: "apply window \(Quoting.quoted(text)) is not \(MaintenanceWindow.shape)")
        }
        guard startMinute != endMinute else {
            throw ApplyPolicyError(code: .invalidWindow, message: MaintenanceWindow.emptyMessage(text))
        }
        self.startMinute = startMinute
        self.endMinute = endMinute
        self.timeZone = try MaintenanceWindow.acceptedTimeZone(timeZoneIdentifier)
        self.timeZoneIdentifier = timeZoneIdentifier
    }

    /// Reads a window typed by an operator.
    ///
    /// - Parameters:
    ///   - text: `HH:MM-HH:MM`, or `HH:MM-HH:MM@Zone`.
    ///   - timeZone: the zone given separately (e.g. `--window-zone`), or nil.
    ///   - defaultZone: used when neither `text` nor `timeZone` names a zone (typically the device's zone); its
    ///     identifier must be accepted too.
    /// - Throws: ``ApplyPolicyError`` `.invalidWindow` for malformed or empty windows (see the type's documentation),
    ///   `.invalidTimeZone` for a refused zone or when `text` and `timeZone` name different zones.
    package init(parsing text: String, timeZone: String?, defaultZone: TimeZone) throws {
        let (times, textZone) = MaintenanceWindow.split(text)
        let (start, end) = try MaintenanceWindow.minutes(parsing: times, wholeText: text)
        if let textZone, let timeZone, textZone != timeZone {
            throw ApplyPolicyError(
                code: .invalidTimeZone,
                message: "apply window \(Quoting.quoted(text)) names zone \(Quoting.quoted(textZone)) but time zone"
                    + " \(Quoting.quoted(timeZone)) was also given (give the zone once)"
            )
        }
        try self.init(startMinute: start, endMinute: end, timeZoneIdentifier: textZone ?? timeZone ?? defaultZone.identifier)
    }

    /// Reads the stored form `HH:MM-HH:MM@Zone` (the zone is required).
    ///
    /// - Throws: ``ApplyPolicyError`` as ``init(parsing:timeZone:defaultZone:)``, and `.invalidTimeZone` when the
    ///   zone is missing.
    package init(encoded text: String) throws {
        let (times, textZone) = MaintenanceWindow.split(text)
        guard let textZone else {
            throw ApplyPolicyError(
                code: .invalidTimeZone,
                message: "apply window \(Quoting.quoted(text)) has no time zone (stored windows are HH:MM-HH:MM@Zone,"
                    + " e.g. 02:00-04:00@Europe/Berlin)"
            )
        }
        let (start, end) = try MaintenanceWindow.minutes(parsing: times, wholeText: text)
        try self.init(startMinute: start, endMinute: end, timeZoneIdentifier: textZone)
    }

    /// Decodes the stored form from a JSON string (see ``init(encoded:)``); value problems throw ``ApplyPolicyError``.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        try self.init(encoded: try container.decode(String.self))
    }

    /// Encodes ``encoded`` as a JSON string.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(encoded)
    }

    /// Checks a time zone identifier and returns the zone.
    ///
    /// Accepted: `UTC`, and identifiers listed by `TimeZone.knownTimeZoneIdentifiers` that have the tz database's
    /// `Area/Location` form (`Europe/Berlin`, `America/New_York`, `Etc/GMT-2` where listed) or are `GMT`.
    /// Refused: unknown names (`Mars/Olympus`), abbreviations and legacy names even where Foundation resolves them
    /// (`CET`, `EST`, `EST5EDT`, `PST8PDT`), offsets (`GMT+1`), the empty string. Abbreviations are refused because
    /// platforms disagree on them and several are ambiguous; an `Area/Location` name means the same everywhere.
    /// - Throws: ``ApplyPolicyError`` with code `.invalidTimeZone`, naming the identifier.
    package static func acceptedTimeZone(_ identifier: String) throws -> TimeZone {
        let suggestion = "use an IANA Area/City identifier, e.g. Europe/Berlin, or UTC"
        let quoted = Quoting.quoted(identifier)
        if identifier == "UTC", let utc = TimeZone(identifier: "UTC") {
            return utc
        }
        let listed = TimeZone.knownTimeZoneIdentifiers.contains(identifier)
        if listed, identifier.contains("/") || identifier == "GMT", let zone = TimeZone(identifier: identifier) {
            return zone
        }
        if identifier.isEmpty {
            throw ApplyPolicyError(code: .invalidTimeZone, message: "apply window time zone '' is empty (\(suggestion))")
        }
        if TimeZone(identifier: identifier) != nil {
            throw ApplyPolicyError(
                code: .invalidTimeZone,
                message: "apply window time zone \(quoted) is an abbreviation, offset or legacy name, not an Area/City identifier (\(suggestion))"
            )
        }
        throw ApplyPolicyError(
            code: .invalidTimeZone,
            message: "apply window time zone \(quoted) is not a known IANA time zone identifier (\(suggestion))"
        )
    }

    /// True when the end is before the start (`22:00-02:00`, also `22:00-00:00`).
    package var crossesMidnight: Bool { endMinute < startMinute }

    /// The stored form `HH:MM-HH:MM@Zone`, e.g. `02:00-04:00@Europe/Berlin`.
    package var encoded: String {
        "\(MaintenanceWindow.clock(startMinute))-\(MaintenanceWindow.clock(endMinute))@\(timeZoneIdentifier)"
    }

    /// The status form, e.g. `02:00–04:00 Europe/Berlin` (en dash).
    package var description: String {
        "\(MaintenanceWindow.clock(startMinute))–\(MaintenanceWindow.clock(endMinute)) \(timeZoneIdentifier)"
    }

    /// Equal when start, end and zone identifier are equal.
    package static func == (lhs: MaintenanceWindow, rhs: MaintenanceWindow) -> Bool {
        lhs.startMinute == rhs.startMinute && lhs.endMinute == rhs.endMinute && lhs.timeZoneIdentifier == rhs.timeZoneIdentifier
    }

    /// Hashes start, end and zone identifier.
    package func hash(into hasher: inout Hasher) {
        hasher.combine(startMinute)
        hasher.combine(endMinute)
        hasher.combine(timeZoneIdentifier)
    }

    /// `HH:MM` for minutes after midnight (0…1440); out-of-range values are shown as plain numbers.
    private static func clock(_ minutes: Int) -> String {
        guard (0...1440).contains(minutes) else {
            return String(minutes)
        }
        let hours = minutes / 60
        let rest = minutes % 60
        return (hours < 10 ? "0" : "") + String(hours) + ":" + (rest < 10 ? "0" : "") + String(rest)
    }

    /// The message for a window whose start equals its end.
    private static func emptyMessage(_ text: String) -> String {
        "apply window \(Quoting.quoted(text)) is empty: start equals end (use e.g. 03:00-04:00, or 00:00-24:00 for the whole day)"
    }

    /// Splits `times@zone` at the first `@`; the zone is nil when there is no `@`.
    private static func split(_ text: String) -> (times: Substring, zone: String?) {
        guard let at = text.firstIndex(of: "@") else {
            return (text[...], nil)
        }
        return (text[..<at], String(text[text.index(after: at)...]))
    }

    /// Reads `HH:MM-HH:MM` into start and end minutes; `wholeText` is quoted in messages.
    private static func minutes(parsing times: Substring, wholeText: String) throws -> (start: Int, end: Int) {
        let quoted = Quoting.quoted(wholeText)
        func refuse(_ reason: String) -> ApplyPolicyError {
            ApplyPolicyError(code: .invalidWindow, message: "apply window \(quoted) \(reason)")
        }
        if times.isEmpty {
            throw refuse("is empty (use \(shape))")
        }
        let chars = Array(times.unicodeScalars)
        func digits(_ index: Int) -> Int? {
            let tens = chars[index].value
            let ones = chars[index + 1].value
            guard (0x30...0x39).contains(tens), (0x30...0x39).contains(ones) else {
                return nil
            }
            return Int(tens - 0x30) * 10 + Int(ones - 0x30)
        }
        guard chars.count == 11, chars[2] == ":", chars[5] == "-", chars[8] == ":",
            let startHour = digits(0), let startMinute = digits(3), let endHour = digits(6), let endMinute = digits(9)
        else {
            throw refuse("is not \(shape)")
        }
        for hour in [startHour, endHour] where hour > 24 {
            throw refuse("has hour \(hour) (hours are 00–24; use \(shape))")
        }
        for minute in [startMinute, endMinute] where minute > 59 {
            throw refuse("has minute \(minute) (minutes are 00–59; use \(shape))")
        }
        for (hour, minute) in [(startHour, startMinute), (endHour, endMinute)] where hour == 24 && minute != 0 {
            throw refuse("goes past 24:00 (the latest time is 24:00; use \(shape))")
        }
        if startHour == 24 {
            throw refuse("starts at 24:00 (a window starts at 00:00–23:59; e.g. 00:00-01:00 for the first hour of a day)")
        }
        let start = startHour * 60 + startMinute
        let end = endHour * 60 + endMinute
        guard start != end else {
            throw ApplyPolicyError(code: .invalidWindow, message: emptyMessage(wholeText))
        }
        return (start, end)
    }
}

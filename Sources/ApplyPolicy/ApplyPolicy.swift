import ClientFoundation
import Foundation

/// When a staged version takes over, as signed with the release (and possibly narrowed by a rollout restriction).
///
/// - ``mode``: the normal rule (see ``ApplyMode``).
/// - ``idleSeconds``: how long without user input counts as idle. Required for ``ApplyMode/idle`` (1…86400). With
///   any other mode it is optional and only used past the ``deadline`` to find "the next idle moment"; absent, that
///   uses ``defaultIdleSeconds`` (60).
/// - ``deadline``: an absolute instant (whole seconds) after which mode, windows and page leases no longer hold:
///   the switch happens at the next idle moment, and at the latest ``graceSeconds`` after the deadline whatever
///   else holds. Nil: no deadline, the mode rules forever.
/// - ``graceSeconds``: 0…604800 (7 days), default 3600.
/// - ``unknownMode``: set only by decoding a signed document whose mode this build does not know; the policy then
///   behaves as ``ApplyMode/nextStart`` and keeps the original text so the device can report it in its status.
///
/// Values are validated on creation: ``init(mode:idleSeconds:deadline:graceSeconds:)``, ``make(mode:idleSeconds:deadline:grace:releasedAt:)``
/// and decoding all refuse out-of-range numbers with ``ApplyPolicyError``.
package struct ApplyPolicy: Sendable, Equatable {
    /// Grace after the deadline when none is given: 3600 seconds.
    package static let defaultGraceSeconds = 3_600
    /// Idle time used past the deadline when ``idleSeconds`` is absent: 60 seconds.
    package static let defaultIdleSeconds = 60
    /// Accepted ``idleSeconds``: 1 second to 1 day.
    package static let idleSecondsRange = 1...86_400
    /// Accepted ``graceSeconds``: 0 to 7 days.
    package static let graceSecondsRange = 0...604_800

    /// The rule for when the staged version takes over (``ApplyMode/nextStart`` for an unknown received mode).
    package let mode: ApplyMode
    /// Seconds without user input that count as idle; required for ``ApplyMode/idle``, else optional.
    package let idleSeconds: Int?
    /// The absolute deadline (whole seconds), or nil for none.
    package let deadline: Date?
    /// Seconds after the ``deadline`` at which the switch happens whatever else holds.
    package let graceSeconds: Int
    /// The received mode text when it was not a known mode (then ``mode`` is ``ApplyMode/nextStart``); else nil.
    package let unknownMode: String?

    /// Today's rule, the policy of a release that carries none: next start, no deadline, default grace.
    package static let nextStart = ApplyPolicy(
        checkedMode: .nextStart, unknownMode: nil, idleSeconds: nil, deadline: nil, graceSeconds: defaultGraceSeconds
    )

    /// Creates a validated policy.
    ///
    /// The deadline is rounded up to a whole second (so it encodes exactly and is never earlier than asked).
    /// - Throws: ``ApplyPolicyError``: `.invalidMode` for ``ApplyMode/idle`` without `idleSeconds`;
    ///   `.invalidDuration` for `idleSeconds` outside 1…86400 or `graceSeconds` outside 0…604800;
    ///   `.invalidDeadline` for a deadline outside the years 0001–9999.
    package init(mode: ApplyMode, idleSeconds: Int? = nil, deadline: Date? = nil, graceSeconds: Int = ApplyPolicy.defaultGraceSeconds) throws {
        self = try ApplyPolicy.validated(mode: mode, unknownMode: nil, idleSeconds: idleSeconds, deadline: deadline, graceSeconds: graceSeconds)
    }

    /// Stores values that were already validated.
    private init(checkedMode: ApplyMode, unknownMode: String?, idleSeconds: Int?, deadline: Date?, graceSeconds: Int) {
        self.mode = checkedMode
        self.unknownMode = unknownMode
        self.idleSeconds = idleSeconds
        self.deadline = deadline
        self.graceSeconds = graceSeconds
    }

    /// The idle time that counts: ``idleSeconds``, or ``defaultIdleSeconds`` (60) when absent.
    package var effectiveIdleSeconds: Int { idleSeconds ?? ApplyPolicy.defaultIdleSeconds }

    /// ``deadline`` plus ``graceSeconds``: from then on the switch happens whatever else holds. Nil without deadline.
    package var graceExpiry: Date? { deadline.map { $0.addingTimeInterval(TimeInterval(graceSeconds)) } }

    /// Builds the policy for a release from what the operator typed (`clientctl publish --apply … --deadline …`).
    ///
    /// - Parameters:
    ///   - mode: `next-start`, `next-navigation`, `idle`, `window` or `now` (strict, see ``ApplyMode/init(parsing:)``).
    ///   - idleSeconds: required for `idle` (1…86400); allowed with other modes (used past the deadline).
    ///   - deadline: nil for none; a duration after `releasedAt` in ``DurationText`` syntax (`48h`, `90m`, `2d`,
    ///     `3600s`, `1d12h`, `3600`), rounded up to a whole second; or an absolute RFC 3339 time with an explicit
    ///     zone (`2026-12-01T00:00:00Z`, `2026-12-01T01:00:00+01:00`). Text containing `:` or starting with
    ///     `YYYY-` is read as a time, anything else as a duration. It must be later than `releasedAt`.
    ///   - grace: nil for the default (1h); else ``DurationText`` syntax, at most 7d.
    ///   - releasedAt: the release instant (the caller's clock reading; this module never reads the clock).
    /// - Throws: ``ApplyPolicyError``: `.invalidMode`, `.invalidDuration` (idle seconds, grace),
    ///   `.invalidDeadline` (malformed deadline text of either form, or a deadline at or before `releasedAt`).
    package static func make(mode: String, idleSeconds: Int?, deadline: String?, grace: String?, releasedAt: Date) throws -> ApplyPolicy {
        let parsedMode = try ApplyMode(parsing: mode)
        let deadlineDate = try deadline.map { try deadlineInstant(parsing: $0, releasedAt: releasedAt) }
        var graceSeconds = defaultGraceSeconds
        if let grace {
            graceSeconds = try DurationText.seconds(parsing: grace, field: "apply grace")
            guard graceSecondsRange.contains(graceSeconds) else {
                throw ApplyPolicyError(
                    code: .invalidDuration,
                    message: "apply grace \(Quoting.quoted(grace)) is longer than 7d (use 0s to 7d, e.g. 1h)"
                )
            }
        }
        return try validated(mode: parsedMode, unknownMode: nil, idleSeconds: idleSeconds, deadline: deadlineDate, graceSeconds: graceSeconds)
    }

    /// Reads `--deadline` text (duration after `releasedAt` or RFC 3339 time) and checks it is after `releasedAt`.
    private static func deadlineInstant(parsing text: String, releasedAt: Date) throws -> Date {
        let field = "apply deadline"
        let scalars = Array(text.unicodeScalars)
        let looksLikeTime =
            scalars.contains(":")
            || (scalars.count >= 5 && scalars[0..<4].allSatisfy { $0.value >= 0x30 && $0.value <= 0x39 } && scalars[4] == "-")
        let instant: Date
        if looksLikeTime {
            instant = try RFC3339Time.date(parsing: text, field: field, code: .invalidDeadline)
        } else {
            let seconds: Int
            do {
                seconds = try DurationText.seconds(parsing: text, field: field)
            } catch let error as ApplyPolicyError {
                throw ApplyPolicyError(
                    code: .invalidDeadline,
                    message: error.message + "; or give an RFC 3339 time with a zone such as 2026-12-01T00:00:00Z"
                )
            }
            instant = Date(timeIntervalSince1970: (releasedAt.timeIntervalSince1970 + TimeInterval(seconds)).rounded(.up))
        }
        guard instant > releasedAt else {
            throw ApplyPolicyError(
                code: .invalidDeadline,
                message: "\(field) \(Quoting.quoted(text)) is not after the release time \(RFC3339Time.string(from: releasedAt))"
                    + " (give a later time or a duration such as 48h)"
            )
        }
        return instant
    }

    /// Reads a policy as a device receives it in a signed document, from the raw field values (used by decoding; a
    /// host that reads the document with its own JSON reader calls this directly).
    ///
    /// Lenient only about the mode: unknown text yields ``ApplyMode/nextStart`` and is kept in ``unknownMode``.
    /// Everything else is checked as on the release side: `idleSeconds` 1…86400 (required when the mode is `idle`),
    /// `graceSeconds` 0…604800 (nil: default 3600), `deadline` a signed time (UTC, docs/formats.md#times) in whole seconds. The
    /// deadline is not compared with any clock (a deadline already past simply applies at once).
    /// - Throws: ``ApplyPolicyError`` (`.invalidMode`, `.invalidDuration`, `.invalidDeadline`) for a malformed value.
    package static func received(mode: String, idleSeconds: Int?, deadline: String?, graceSeconds: Int?) throws -> ApplyPolicy {
        let reading = ApplyMode.received(mode)
        let deadlineDate = try deadline.map { try RFC3339Time.signedDate(parsing: $0, field: "apply deadline", code: .invalidDeadline) }
        return try validated(
            mode: reading.mode,
            unknownMode: reading.known ? nil : mode,
            idleSeconds: idleSeconds,
            deadline: deadlineDate,
            graceSeconds: graceSeconds ?? defaultGraceSeconds
        )
    }

    /// Checks every value and builds the policy; shared by all ways of creating one.
    private static func validated(
        mode: ApplyMode, unknownMode: String?, idleSeconds: Int?, deadline: Date?, graceSeconds: Int
    ) throws -> ApplyPolicy {
        if let idleSeconds, !idleSecondsRange.contains(idleSeconds) {
            throw ApplyPolicyError(
                code: .invalidDuration,
                message: "apply idle seconds \(idleSeconds) is out of range (use 1 to 86400, e.g. 300)"
            )
        }
        if mode == .idle, idleSeconds == nil {
            throw ApplyPolicyError(
                code: .invalidMode,
                message: "apply mode 'idle' needs idle seconds (1 to 86400, e.g. 300)"
            )
        }
        guard graceSecondsRange.contains(graceSeconds) else {
            throw ApplyPolicyError(
                code: .invalidDuration,
                message: "apply grace seconds \(graceSeconds) is out of range (use 0 to 604800, i.e. at most 7d)"
            )
        }
        var wholeDeadline: Date?
        if let deadline {
            let seconds = deadline.timeIntervalSince1970.rounded(.up)
            // 0001-01-01T00:00:00Z ... 9999-12-31T23:59:59Z: what RFC 3339 text can carry.
            guard seconds.isFinite, seconds >= -62_135_596_800, seconds <= 253_402_300_799 else {
                throw ApplyPolicyError(
                    code: .invalidDeadline,
                    message: "apply deadline \(deadline.timeIntervalSince1970) (seconds since 1970) is outside the years 0001 to 9999"
                        + " (use e.g. 2026-12-01T00:00:00Z)"
                )
            }
            wholeDeadline = Date(timeIntervalSince1970: seconds)
        }
        return ApplyPolicy(
            checkedMode: mode, unknownMode: unknownMode, idleSeconds: idleSeconds, deadline: wholeDeadline, graceSeconds: graceSeconds
        )
    }
}

extension ApplyPolicy {
    /// The policy in one phrase for people: `idle 300 s, deadline 2026-12-01T00:00:00Z + grace 1h`,
    /// `next-start`, or `unknown mode 'later' (read as next-start)`.
    package var summary: String {
        var text = unknownMode.map { "unknown mode \(Quoting.quoted($0)) (read as next-start)" } ?? mode.rawValue
        if let idleSeconds { text += " \(idleSeconds) s" }
        if let deadline {
            text += ", deadline \(RFC3339Time.string(from: deadline)) + grace \(DurationText.render(seconds: graceSeconds))"
        }
        return text
    }
}

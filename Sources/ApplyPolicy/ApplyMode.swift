import ClientFoundation
/// When a verified, staged version of the web client takes over from the running one.
///
/// The raw value is the spelling used by `clientctl publish --apply` and in the `"mode"` key of a signed
/// ``ApplyPolicy``. There are two readings of that text:
/// - ``init(parsing:)`` for what an operator types: unknown text is refused.
/// - ``init(received:)`` / ``received(_:)`` for what a device finds in a signed document: unknown text (a mode
///   added by a newer publisher) reads as ``nextStart``, which is always safe — the device keeps the running
///   version until its next start, exactly as before apply policies existed.
package enum ApplyMode: String, Sendable, Equatable, Hashable, CaseIterable, CustomStringConvertible {
    /// `next-start`: the staged version runs from the next start of the host (the rule before apply policies).
    case nextStart = "next-start"
    /// `next-navigation`: the page's next top-level navigation loads the staged version.
    case nextNavigation = "next-navigation"
    /// `idle`: switch once no user input has been seen for ``ApplyPolicy/idleSeconds``.
    case idle
    /// `window`: switch only while one of the device's ``MaintenanceWindow``s is open.
    case window
    /// `now`: switch at once (a critical fix); page leases still hold until they expire or the deadline passes.
    case now

    /// Reads a mode typed by an operator (`--apply`). Exact, case-sensitive match of the raw value.
    ///
    /// - Throws: ``ApplyPolicyError`` with code `.invalidMode` for any other text, naming it and listing the modes.
    package init(parsing text: String) throws {
        guard let mode = ApplyMode(rawValue: text) else {
            let reason = text.isEmpty ? "is empty" : "is not a known apply mode"
            throw ApplyPolicyError(
                code: .invalidMode,
                message: "apply mode \(Quoting.quoted(text)) \(reason) (use one of \(ApplyMode.spellings))"
            )
        }
        self = mode
    }

    /// Reads a mode received in a signed document: never fails; unknown text reads as ``nextStart``.
    /// Use ``received(_:)`` to also learn whether the text was known.
    package init(received text: String) {
        self = ApplyMode.received(text).mode
    }

    /// Reads a mode received in a signed document and tells whether it was known.
    ///
    /// - Returns: the mode and `known == true` for one of the raw values; `(.nextStart, false)` for anything else.
    package static func received(_ text: String) -> (mode: ApplyMode, known: Bool) {
        if let mode = ApplyMode(rawValue: text) {
            return (mode, true)
        }
        return (.nextStart, false)
    }

    /// All spellings, comma separated, for messages: `next-start, next-navigation, idle, window, now`.
    package static var spellings: String {
        allCases.map(\.rawValue).joined(separator: ", ")
    }

    /// How long the mode may make a device wait, from eager (0) to patient (4): `now` waits for
    /// nothing, `idle` for the first quiet moment, `window` for the next maintenance window,
    /// `next-navigation` for a page that navigates (a kiosk's may never), `next-start` for a
    /// restart (which may never come). A rollout restriction may only move up this scale
    /// (``ApplyPolicy/restricted(by:)``).
    package var patience: Int {
        switch self {
        case .now: 0
        case .idle: 1
        case .window: 2
        case .nextNavigation: 3
        case .nextStart: 4
        }
    }

    /// The raw value, e.g. `next-start`.
    package var description: String { rawValue }
}

/// Counts by kind since start, reported coalesced: at most once a second, and on
/// ``flush()`` (at exit), only when they changed. What the bridge (``BridgeGuard``) and the
/// dialogs (``PageDialogs``) refused: a page that floods either makes a few event lines,
/// not one per refusal.
final class CoalescedCounts<Kind: Hashable & CaseIterable & RawRepresentable & Sendable>: @unchecked Sendable
where Kind.RawValue == String {
    // Confined to the GTK main thread: every method is called there (the report timer too).

    /// Counts since start.
    private(set) var counts: [Kind: Int] = [:]
    /// Called with the counts when they changed (at most once a second).
    var onReport: ([Kind: Int]) -> Void = { _ in }
    private var reported: [Kind: Int] = [:]
    private var scheduled = false

    /// Counts one and schedules a report.
    func count(_ kind: Kind) {
        counts[kind, default: 0] += 1
        guard !scheduled else { return }
        scheduled = true
        GMain.after(seconds: 1) { [self] in
            scheduled = false
            flush()
        }
    }

    /// Reports the counts now if they changed since the last report.
    func flush() {
        guard counts != reported else { return }
        reported = counts
        onReport(counts)
    }

    /// An event's fields: every kind's count since start, and the total.
    static func fields(_ counts: [Kind: Int]) -> [String: Any] {
        var fields: [String: Any] = ["total": counts.values.reduce(0, +)]
        for kind in Kind.allCases { fields[kind.rawValue] = counts[kind, default: 0] }
        return fields
    }
}

import Synchronization

/// Counts by kind since start, reported coalesced: at most once a second, and on
/// ``flush()`` (at exit), only when they changed. What the bridge (``BridgeGuard``) and the
/// dialogs (``PageDialogs``) refused: a page that floods either makes a few event lines,
/// not one per refusal. Called on the GTK main thread; its state is behind a lock all the
/// same, so it is plainly `Sendable`.
final class CoalescedCounts<Kind: Hashable & CaseIterable & RawRepresentable & Sendable>: Sendable
where Kind.RawValue == String {
    private struct State {
        var counts: [Kind: Int] = [:]
        var reported: [Kind: Int] = [:]
        var scheduled = false
        var onReport: @Sendable ([Kind: Int]) -> Void = { _ in }
    }
    private let state = Mutex(State())

    /// Counts since start.
    var counts: [Kind: Int] { state.withLock { $0.counts } }

    /// Called with the counts when they changed (at most once a second).
    var onReport: @Sendable ([Kind: Int]) -> Void {
        get { state.withLock { $0.onReport } }
        set { state.withLock { $0.onReport = newValue } }
    }

    /// Counts one and schedules a report.
    func count(_ kind: Kind) {
        let schedule = state.withLock { s -> Bool in
            s.counts[kind, default: 0] += 1
            guard !s.scheduled else { return false }
            s.scheduled = true
            return true
        }
        guard schedule else { return }
        GMain.after(.seconds(1)) { [self] in
            state.withLock { $0.scheduled = false }
            flush()
        }
    }

    /// Reports the counts now if they changed since the last report.
    func flush() {
        let report = state.withLock { s -> (counts: [Kind: Int], to: @Sendable ([Kind: Int]) -> Void)? in
            guard s.counts != s.reported else { return nil }
            s.reported = s.counts
            return (s.counts, s.onReport)
        }
        if let report { report.to(report.counts) }
    }

    /// An event's fields: every kind's count since start, and the total.
    static func fields(_ counts: [Kind: Int]) -> [String: Any] {
        var fields: [String: Any] = ["total": counts.values.reduce(0, +)]
        for kind in Kind.allCases { fields[kind.rawValue] = counts[kind, default: 0] }
        return fields
    }
}

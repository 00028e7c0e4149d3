import Foundation

extension ApplyDecision {
    /// Decides what to do about the staged version at `now`. Pure: the same input and `now` give the same answer.
    ///
    /// Rows are tried in order; the first that matches decides. "idle" is the time since
    /// max(`lastInput` ?? `hostStartedAt`, `hostStartedAt`), 0 when that is negative (clock went back), compared with
    /// `idleSeconds` (default 60 when absent); "idle reached at" = min(that instant, `now`) + idle seconds.
    ///
    /// | # | condition | result |
    /// |---|-----------|--------|
    /// | 1 | `alreadySwitched` | `.done` |
    /// | 2 | `trialRunning`, else `downloading` | `.wait(.trial)`, else `.wait(.download)` — even past the deadline |
    /// | 3 | `now` ≥ deadline + grace | `.switchNow(.graceExpired)` |
    /// | 4 | `now` ≥ deadline | idle: `.switchNow(.deadline)`; else `.wait(.deadlineIdle(until: min(idle reached at, deadline + grace)))` |
    /// | 5 | `leaseUntil` > `now` | `.wait(.lease(until: min(leaseUntil, deadline)))` (`leaseUntil` without deadline) |
    /// | 6 | mode `now` | `.switchNow(.now)` |
    /// | 7 | mode `idle` | idle: `.switchNow(.idle)`; else `.wait(.idle(until: idle reached at))` |
    /// | 8 | mode `window` | inside any window: `.switchNow(.window)`; else `.wait(.window(opens: earliest opening, window: its window))` |
    /// | 9 | mode `next-navigation` | `.wait(.nextNavigation)` |
    /// | 10 | mode `next-start` (also an unknown received mode) | `.wait(.nextStart)` |
    ///
    /// Never during a trial or a download (row 2 beats the deadline). Past the deadline (rows 3 and 4) leases,
    /// windows and the mode no longer hold; past deadline + grace (row 3) input no longer holds either. Row 8: the
    /// earliest ``MaintenanceWindow/nextOpening(after:)`` among the windows, the first listed on ties; `opens` is nil
    /// (window: the first listed) if none opens within 8 days; without any window `.wait(.window(opens: nil, window: nil))`.
    ///
    /// Boundaries: a deadline, grace expiry or idle threshold reached exactly at `now` counts as reached; a lease
    /// expiring exactly at `now` no longer holds.
    package static func decide(_ input: ApplyInput, now: Date) -> ApplyDecision {
        if input.alreadySwitched {
            return .done
        }
        if input.trialRunning {
            return .wait(.trial)
        }
        if input.downloading {
            return .wait(.download)
        }
        let policy = input.policy
        let idleReachedAt = min(input.idleSince, now).addingTimeInterval(TimeInterval(policy.effectiveIdleSeconds))
        if let deadline = policy.deadline, let graceExpiry = policy.graceExpiry {
            if now >= graceExpiry {
                return .switchNow(trigger: .graceExpired)
            }
            if now >= deadline {
                if now >= idleReachedAt {
                    return .switchNow(trigger: .deadline)
                }
                return .wait(.deadlineIdle(until: min(idleReachedAt, graceExpiry)))
            }
        }
        if let leaseUntil = input.leaseUntil, leaseUntil > now {
            return .wait(.lease(until: policy.deadline.map { min(leaseUntil, $0) } ?? leaseUntil))
        }
        switch policy.mode {
        case .now:
            return .switchNow(trigger: .now)
        case .idle:
            return now >= idleReachedAt ? .switchNow(trigger: .idle) : .wait(.idle(until: idleReachedAt))
        case .window:
            return windowDecision(input.windows, now: now)
        case .nextNavigation:
            return .wait(.nextNavigation)
        case .nextStart:
            return .wait(.nextStart)
        }
    }

    /// The next instant at which ``decide(_:now:)`` could answer differently without new input, so a host can set
    /// one timer instead of polling; nil when only new input can change the answer (or there is nothing to wait for).
    ///
    /// New input means: user input, a lease taken or released, a trial or download ending, a navigation, a restart,
    /// a changed policy or window list — the host decides again on each. Per answer:
    /// `.done`, `.switchNow`, `.wait(.trial)`, `.wait(.download)`: nil. `.wait(.lease(until:))`,
    /// `.wait(.deadlineIdle(until:))`: `until`. `.wait(.idle(until:))`: min(until, deadline).
    /// `.wait(.window(opens:window:))`: min(opens, deadline); if no window opens within 8 days, min(now + 8 days,
    /// deadline); without windows, the deadline. `.wait(.nextStart)`, `.wait(.nextNavigation)`: the deadline.
    /// Where a deadline is involved it is still in the future, so the result is always after `now`.
    package static func nextWake(_ input: ApplyInput, now: Date) -> Date? {
        let deadline = input.policy.deadline
        func earliest(_ date: Date) -> Date {
            deadline.map { min($0, date) } ?? date
        }
        switch decide(input, now: now) {
        case .done, .switchNow, .wait(.trial), .wait(.download):
            return nil
        case .wait(.lease(let until)), .wait(.deadlineIdle(let until)):
            return until
        case .wait(.idle(let until)):
            return earliest(until)
        case .wait(.window(let opens?, _)):
            return earliest(opens)
        case .wait(.window(nil, _?)):
            return earliest(now.addingTimeInterval(MaintenanceWindow.searchHorizon))
        case .wait(.window(nil, nil)), .wait(.nextStart), .wait(.nextNavigation):
            return deadline
        }
    }

    /// Row 8 of ``decide(_:now:)``: inside any window, or the earliest next opening (first listed on ties).
    private static func windowDecision(_ windows: [MaintenanceWindow], now: Date) -> ApplyDecision {
        guard let first = windows.first else {
            return .wait(.window(opens: nil, window: nil))
        }
        if windows.contains(where: { $0.contains(now) }) {
            return .switchNow(trigger: .window)
        }
        var best: (opens: Date, window: MaintenanceWindow)?
        for window in windows {
            guard let opens = window.nextOpening(after: now) else {
                continue
            }
            if let current = best, current.opens <= opens {
                continue
            }
            best = (opens, window)
        }
        return .wait(.window(opens: best?.opens, window: best?.window ?? first))
    }
}

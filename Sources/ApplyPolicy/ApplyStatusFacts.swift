import ClientFoundation
import Foundation

/// What a host's apply driver knows of the staged version at one decision, as facts
/// (``ApplyMachine/Action/writeStatus(_:)``): `apply-status.json` and `clientctl status`
/// render them as one line (``line``).
package struct ApplyStatusFacts: Sendable, Equatable {
    /// What the decision said.
    package enum Said: Sendable, Equatable {
        /// The policy's answer.
        case decision(ApplyDecision)
        /// `serve`: the switch is allowed (`trigger`, as said to a person) and waits for a
        /// page's shim, a navigation or the next start.
        case allowedForPages(trigger: String)
        /// The last switch failed; the next try is at `retryAt`.
        case switchFailed(retryAt: Date, message: String)
    }

    /// A jump of the wall clock seen lately: by how much (negative: back) and when.
    package struct ClockJump: Sendable, Equatable {
        package var by: Duration
        package var at: Date

        package init(by: Duration, at: Date) {
            self.by = by
            self.at = at
        }
    }

    /// The staged version the facts are about.
    package var version: String
    package var said: Said
    /// The policy in one phrase (`window, deadline … + grace 1h`).
    package var policy: String
    /// When the host decided.
    package var decidedAt: Date
    /// When it decides again at the latest (nil: only when woken).
    package var nextDecision: Date?
    /// The last jump of the wall clock, if one was seen lately.
    package var clockNote: ClockJump?

    package init(version: String, said: Said, policy: String, decidedAt: Date, nextDecision: Date?, clockNote: ClockJump?) {
        self.version = version
        self.said = said
        self.policy = policy
        self.decidedAt = decidedAt
        self.nextDecision = nextDecision
        self.clockNote = clockNote
    }

    /// The facts in one line: `waiting for the device to be idle (at …)`, `switch allowed
    /// (mode now): …`, `the switch failed, trying again at …: …`, and the clock's jump after
    /// a `; ` when one was seen.
    package var line: String {
        let said: String
        switch self.said {
        case .decision(let decision):
            said = decision.description
        case .allowedForPages(let trigger):
            said = "switch allowed (\(trigger)): waiting for a page's shim to switch, a navigation or the next start"
        case .switchFailed(let retryAt, let message):
            said = "the switch failed, trying again at \(RFC3339Time.string(from: retryAt)): \(message)"
        }
        guard let jump = clockNote else { return said }
        return said + "; the wall clock jumped by \(Self.signed(jump.by)) at \(RFC3339Time.string(from: jump.at)); "
            + "idle time, leases and retries go by the monotonic clock"
    }

    /// Two facts whose lines differ only in their times (`… (at 2026-…)`): the same words
    /// before the first time, and a jump of the wall clock in both or in neither.
    package func sameKind(as other: ApplyStatusFacts) -> Bool {
        line.prefix { $0 != "(" } == other.line.prefix { $0 != "(" } && (clockNote == nil) == (other.clockNote == nil)
    }

    /// `+1d 2h`, `−30s`: a jump's size.
    static func signed(_ by: Duration) -> String {
        let seconds = by.inSeconds
        return (seconds < 0 ? "−" : "+") + DurationText.render(seconds: Int(abs(seconds).rounded()))
    }
}

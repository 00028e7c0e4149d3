import ClientFoundation
import Foundation

extension ApplyPolicy {
    /// Applies a rollout restriction to this (the release's) policy and returns the effective policy.
    ///
    /// Rule: a restriction may make devices wait longer, never hurry them. Modes are ranked from
    /// eager to patient by what they wait for (``ApplyMode/patience``): `now` (nothing), `idle`
    /// (the first quiet moment), `window` (the next maintenance window, within a day for a
    /// nightly one), `next-navigation` (a page that navigates, which a kiosk may never do),
    /// `next-start` (a restart, which may never come). It is refused with
    /// `.notAllowedByRestriction` when
    /// 1. its mode is ``ApplyMode/now`` and the release's is not;
    /// 2. its mode is more eager than the release's (`idle` for a `next-start` release);
    /// 3. it waits for a shorter quiet time than the release's where both wait for one: a
    ///    policy's quiet time counts when its mode is `idle` or it has a deadline (past the
    ///    deadline the switch waits for the next idle moment, whatever the mode), so a
    ///    `window` restriction with a one-second idle time cannot hurry an `idle` release
    ///    past its deadline;
    /// 4. it has a deadline and the release has none (adding a deadline forces a switch the release never asked for);
    /// 5. its deadline is earlier than the release's;
    /// 6. its ``graceSeconds`` is shorter than the release's (checked whether or not a deadline is set).
    ///
    /// Otherwise the restriction's policy is the effective one, as a whole (its mode, idle seconds, deadline, grace):
    /// it may drop the release's deadline, move it later, lengthen the grace or pick a more patient mode.
    ///
    /// - Parameter other: the restriction's policy.
    /// - Returns: `other`, when allowed.
    /// - Throws: ``ApplyPolicyError`` with code `.notAllowedByRestriction`, naming the offending value and the
    ///   release's value.
    package func restricted(by other: ApplyPolicy) throws -> ApplyPolicy {
        let rule = "a restriction may only make devices wait longer"
        if other.mode == .now, mode != .now {
            throw ApplyPolicyError(
                code: .notAllowedByRestriction,
                message: "rollout restriction mode 'now' would hurry a release whose mode is"
                    + " \(Quoting.quoted(unknownMode ?? mode.rawValue)); \(rule) (use the release's mode or another mode than now)"
            )
        }
        if other.mode.patience < mode.patience {
            throw ApplyPolicyError(
                code: .notAllowedByRestriction,
                message: "rollout restriction mode \(Quoting.quoted(other.mode.rawValue)) would hurry a release whose mode is"
                    + " \(Quoting.quoted(unknownMode ?? mode.rawValue)); \(rule) (modes from eager to patient: now, idle, window,"
                    + " next-navigation, next-start)"
            )
        }
        if other.waitsForQuiet, waitsForQuiet, other.effectiveIdleSeconds < effectiveIdleSeconds {
            throw ApplyPolicyError(
                code: .notAllowedByRestriction,
                message: "rollout restriction idle time \(DurationText.render(seconds: other.effectiveIdleSeconds)) is shorter than the"
                    + " release's \(DurationText.render(seconds: effectiveIdleSeconds)); \(rule) (use at least the release's)"
            )
        }
        if let restrictionDeadline = other.deadline {
            let restrictionText = RFC3339Time.string(from: restrictionDeadline)
            guard let releaseDeadline = deadline else {
                throw ApplyPolicyError(
                    code: .notAllowedByRestriction,
                    message: "rollout restriction deadline \(restrictionText) adds a deadline to a release that has none;"
                        + " \(rule) (drop the restriction's deadline)"
                )
            }
            if restrictionDeadline < releaseDeadline {
                throw ApplyPolicyError(
                    code: .notAllowedByRestriction,
                    message: "rollout restriction deadline \(restrictionText) is earlier than the release's"
                        + " \(RFC3339Time.string(from: releaseDeadline)); \(rule) (use the release's deadline or a later one)"
                )
            }
        }
        if other.graceSeconds < graceSeconds {
            throw ApplyPolicyError(
                code: .notAllowedByRestriction,
                message: "rollout restriction grace \(DurationText.render(seconds: other.graceSeconds)) is shorter than the release's"
                    + " \(DurationText.render(seconds: graceSeconds)); \(rule) (use a grace of at least"
                    + " \(DurationText.render(seconds: graceSeconds)))"
            )
        }
        return other
    }

    /// Whether the policy ever waits for a quiet time: its mode is `idle`, or it has a
    /// deadline (past which the switch waits for the next idle moment) and its mode is not
    /// `now` (which never waits).
    package var waitsForQuiet: Bool { mode == .idle || (deadline != nil && mode != .now) }
}

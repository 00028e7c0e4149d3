import Foundation

/// Everything ``ApplyDecision/decide(_:now:)`` looks at, as the host knows it at one moment.
///
/// All instants are wall-clock readings of the host. The host drops the leases of pages that died before filling in
/// ``leaseUntil``. Instants later than the `now` passed to ``ApplyDecision/decide(_:now:)`` (the clock went back)
/// are read as `now` — never as elapsed idle time — so nothing switches early; a host that keeps such stamps should
/// store ``clamped(to:)`` so that idle time can accumulate again from the corrected clock.
package struct ApplyInput: Sendable, Equatable {
    /// The effective policy: the release's, restricted by the rollout (see ``ApplyPolicy/restricted(by:)``).
    package var policy: ApplyPolicy
    /// When this version was verified and staged. Informational (status, ``clamped(to:)``): no rule counts from it,
    /// so a version staged while the device has long been idle may switch at once in `idle` mode.
    package var stagedAt: Date
    /// The device's maintenance windows (only mode `window` uses them).
    package var windows: [MaintenanceWindow]
    /// The last user input seen since the host started; nil when there was none.
    package var lastInput: Date?
    /// When the host started; idle time is measured from max(``lastInput`` ?? this, this).
    package var hostStartedAt: Date
    /// The latest expiry among live page leases, or nil when no page holds one.
    package var leaseUntil: Date?
    /// A trial of another version is running.
    package var trialRunning: Bool
    /// A download is running.
    package var downloading: Bool
    /// This version has already taken over (a version never switches twice).
    package var alreadySwitched: Bool

    /// Creates an input; the optional parts default to "nothing going on" (no windows, no input, no lease, no trial,
    /// no download, not switched). No default reads the clock.
    package init(
        policy: ApplyPolicy,
        stagedAt: Date,
        hostStartedAt: Date,
        windows: [MaintenanceWindow] = [],
        lastInput: Date? = nil,
        leaseUntil: Date? = nil,
        trialRunning: Bool = false,
        downloading: Bool = false,
        alreadySwitched: Bool = false
    ) {
        self.policy = policy
        self.stagedAt = stagedAt
        self.hostStartedAt = hostStartedAt
        self.windows = windows
        self.lastInput = lastInput
        self.leaseUntil = leaseUntil
        self.trialRunning = trialRunning
        self.downloading = downloading
        self.alreadySwitched = alreadySwitched
    }

    /// The instant idle time is measured from: max(``lastInput`` ?? ``hostStartedAt``, ``hostStartedAt``).
    package var idleSince: Date {
        max(lastInput ?? hostStartedAt, hostStartedAt)
    }

    /// Seconds without input at `now`: `now` − ``idleSince``, and 0 when that is negative (clock went back).
    package func idleSeconds(at now: Date) -> TimeInterval {
        max(0, now.timeIntervalSince(idleSince))
    }

    /// This input with ``stagedAt``, ``hostStartedAt`` and ``lastInput`` moved back to `now` where they are later
    /// (the clock went back). Leases are left alone: a lease is a promise about the future.
    package func clamped(to now: Date) -> ApplyInput {
        var copy = self
        copy.stagedAt = min(stagedAt, now)
        copy.hostStartedAt = min(hostStartedAt, now)
        copy.lastInput = lastInput.map { min($0, now) }
        return copy
    }
}

import ClientFoundation
import FleetReports
import Foundation

/// When a device sends its next report batch (docs/fleet-reports.md#delivery), as a pure
/// state machine: every transition takes the current monotonic time, and the jitter comes
/// from the random source it was given; it never sleeps, sends or reads a clock.
///
/// - A new report opens a *batching window*: the batch goes out ``Tuning/window`` later,
///   with whatever else was recorded meanwhile (a rollback and its blacklisting: one request).
/// - Requests draw on a bucket of ``Tuning/burst`` tokens that refills one every
///   ``Tuning/refill``: events reach the collector within seconds, and a device that keeps
///   reporting sends at most 3600 / refill requests an hour.
/// - A failure (the collector down, a 5xx, a timeout) backs off exponentially from
///   ``Tuning/backoffBase`` to ``Tuning/backoffCap``, with jitter (each wait a random point
///   in its upper half) so a fleet that lost its collector does not return in step.
/// - A 429 or 503 with `Retry-After` waits what the collector asked, at most
///   ``Tuning/retryAfterCap``, and never less than the backoff would.
/// - A refusal (another 4xx) of the same batch ``Tuning/maxRefusals`` times drops it.
/// - Reports that only say "still here" (a heartbeat, a wait for the rollout's place) are
///   held for company: they go with the next report that matters, or ``Tuning/hold`` after
///   the oldest of them was recorded (``heldUntil(_:now:hold:)``).
package struct ReportDeliverySchedule: Sendable, Equatable {
    /// The schedule's constants.
    package struct Tuning: Sendable, Equatable {
        /// How long after a new report its batch goes out.
        package var window: Duration = .seconds(5)
        /// Requests that may go out back to back.
        package var burst: Int = 4
        /// One more request allowed every this long.
        package var refill: Duration = .seconds(15 * 60)
        /// The first wait after a failure.
        package var backoffBase: Duration = .seconds(30)
        /// The longest wait after failures.
        package var backoffCap: Duration = .seconds(3600)
        /// The longest `Retry-After` honoured.
        package var retryAfterCap: Duration = .seconds(6 * 3600)
        /// Refusals of one batch before it is dropped.
        package var maxRefusals: Int = 3
        /// How long reports that can wait (``canWait(_:)``) wait for company: twice the
        /// heartbeat's interval, so a quiet device is heard from at least every 19 hours,
        /// within the collector's default day-long window.
        package var hold: Duration = .seconds(12 * 3600)

        package init() {}
        package static let standard = Tuning()
    }

    /// How an attempt ended.
    package enum Outcome: Sendable, Equatable {
        /// The collector stored the batch; `more`: the journal holds further reports.
        case delivered(more: Bool)
        /// 429 or 503: try again after `retryAfter` (nil when the collector did not say).
        case busy(retryAfter: Duration?)
        /// No answer, or an answer that is no verdict on the batch (5xx, a timeout).
        case failed
        /// The collector refused the batch that starts at `firstSeq` (a 4xx).
        case refused(firstSeq: Int64)
    }

    /// What the driver does after ``attempted(_:now:)``.
    package enum Verdict: Sendable, Equatable {
        /// Nothing more: the next is at ``due``.
        case wait
        /// Drop the refused batch (it was refused ``Tuning/maxRefusals`` times).
        case dropBatch
    }

    package let tuning: Tuning
    /// When the next attempt is due (monotonic time); nil: nothing to send.
    package private(set) var due: Duration?
    /// Consecutive failed attempts (resets on a delivery).
    package private(set) var failures = 0
    /// The batch refused last (its first seq) and how often: the driver keeps them across
    /// processes (`install` runs are separate processes), so a refused batch is dropped
    /// after ``Tuning/maxRefusals`` refusals wherever they happened.
    package var refusedSeq: Int64?
    package var refusedCount = 0
    /// Tokens in the bucket, and when it was last refilled.
    private var tokens: Double
    private var refilledAt: Duration
    /// No attempt before this (backoff or `Retry-After`).
    private var notBefore: Duration?

    /// - Parameter now: the current monotonic time; the bucket starts full.
    package init(tuning: Tuning = .standard, now: Duration) {
        self.tuning = tuning
        self.tokens = Double(tuning.burst)
        self.refilledAt = now
    }

    /// Reports are waiting (one was just recorded, or some were found at start): schedules
    /// an attempt at the end of a batching window, unless one is already due sooner.
    package mutating func reportsWaiting(now: Duration) {
        schedule(earliest: now + tuning.window, now: now)
    }

    /// Reports are pending but all of them can wait until `until` (monotonic): nothing is
    /// sent before then unless a report that matters wakes the schedule
    /// (``reportsWaiting(now:)``). Takes no token.
    package mutating func holding(until: Duration) {
        due = max(until, notBefore ?? until)
    }

    /// A report that only says the device is still there and still waiting: a `heartbeat`,
    /// or a `check-refused` because the rollout has not reached the device or the release
    /// is not for it (its target, a pin). Losing a few hours on these changes no figure of
    /// the fleet view but the "last seen". Also a `page-errors` without a problem over a
    /// period of an hour or more (docs/page-errors.md#periods-and-reports): a version's
    /// steady use; its first periods (5, 10 and 45 minutes) and any period with a problem go
    /// at once, for the guard.
    package static func canWait(_ report: FleetReport) -> Bool {
        switch report.type {
        case .heartbeat: true
        case .pageErrors: report.count == nil && (report.ms ?? 0) >= 3_600_000
        case .checkRefused: report.reason == .rollout || report.reason == .target
        default: false
        }
    }

    /// When `pending` (oldest first) may be sent, from the wall clock: nil for now (a report
    /// that matters is among them, or the oldest has waited `hold`), else the oldest
    /// report's time plus `hold`. A report stamped after `now` (the clock went back) is
    /// sent at once rather than held for as long as the jump.
    package static func heldUntil(_ pending: [FleetReport], now: Date, hold: Duration) -> Date? {
        guard let oldest = pending.first, pending.allSatisfy(canWait), oldest.time <= now else { return nil }
        let until = oldest.time.addingTimeInterval(hold.inSeconds)
        return until > now ? until : nil
    }

    /// An attempt starts at `now`: takes a token. The driver calls it when ``due`` came.
    package mutating func attempting(now: Duration) {
        refill(now: now)
        tokens = max(0, tokens - 1)
        due = nil
    }

    /// An attempt was due but the journal holds nothing to send: nothing is due now.
    package mutating func nothingPending() {
        due = nil
    }

    /// How the attempt begun with ``attempting(now:)`` ended.
    /// - Parameter random: a number in 0..<1 (the jitter).
    package mutating func attempted(_ outcome: Outcome, now: Duration, random: Double) -> Verdict {
        switch outcome {
        case .delivered(let more):
            failures = 0
            refusedSeq = nil
            refusedCount = 0
            notBefore = nil
            if more { schedule(earliest: now, now: now) }
            return .wait
        case .busy(let retryAfter):
            failures += 1
            let backoff = backoffDelay(random: random)
            let wait = retryAfter.map { max(min($0, tuning.retryAfterCap), backoff) } ?? backoff
            notBefore = now + wait
            schedule(earliest: now + wait, now: now)
            return .wait
        case .failed:
            failures += 1
            let wait = backoffDelay(random: random)
            notBefore = now + wait
            schedule(earliest: now + wait, now: now)
            return .wait
        case .refused(let firstSeq):
            let count = refusedSeq == firstSeq ? refusedCount + 1 : 1
            if count >= tuning.maxRefusals {
                refusedSeq = nil
                refusedCount = 0
                failures = 0
                notBefore = nil
                schedule(earliest: now, now: now)
                return .dropBatch
            }
            refusedSeq = firstSeq
            refusedCount = count
            failures += 1
            let wait = backoffDelay(random: random)
            notBefore = now + wait
            schedule(earliest: now + wait, now: now)
            return .wait
        }
    }

    /// The wait after the `failures`-th failure in a row: `base · 2^(failures−1)`, capped,
    /// then a random point in its upper half.
    private func backoffDelay(random: Double) -> Duration {
        let base = tuning.backoffBase.inSeconds
        let cap = tuning.backoffCap.inSeconds
        let full = min(cap, base * pow(2, Double(max(0, min(failures - 1, 30)))))
        let jittered = full * (0.5 + 0.5 * min(max(random, 0), 1))
        return .seconds(clamping: jittered, limit: tuning.backoffCap)
    }

    /// Sets ``due`` to the later of `earliest`, the backoff and the next token, unless an
    /// attempt is already due sooner.
    private mutating func schedule(earliest: Duration, now: Duration) {
        refill(now: now)
        var at = earliest
        if let notBefore { at = max(at, notBefore) }
        if tokens < 1 {
            let missing = 1 - tokens
            at = max(at, now + .seconds(clamping: missing * tuning.refill.inSeconds, limit: tuning.refill))
        }
        if let due, due <= at { return }
        due = at
    }

    private mutating func refill(now: Duration) {
        guard now > refilledAt else { return }
        let gained = (now - refilledAt) / tuning.refill
        tokens = min(Double(tuning.burst), tokens + gained)
        refilledAt = now
    }
}

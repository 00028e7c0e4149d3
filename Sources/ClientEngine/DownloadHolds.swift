import ApplyPolicy
import ClientFoundation
import ClientUpdater
import Foundation
import Synchronization

/// The leases holding a device's downloads back (docs/download-policy.md#holds): a pure
/// state machine on the monotonic clock, the rule of apply leases (`ApplyMachine`). Each
/// lease lasts at most ``maxLease`` from when it was taken or renewed, so a holder that
/// goes away without letting go holds for no longer than that; ends are kept on the
/// monotonic clock, so no move of the wall clock makes a lease longer or ends it early.
package struct DownloadHoldLeases: Sendable, Equatable {
    /// The longest a lease holds at once (it may renew): the apply leases' cap.
    package static let maxLease = ApplyMachine.maxLease
    /// The most leases held at once; past it the lease ending first goes.
    package static let maxLeases = ApplyMachine.maxLeases

    private struct Lease: Sendable, Equatable {
        var holder: String
        var end: Duration
    }
    private var leases: [String: Lease] = [:]

    package init() {}

    /// `lease` (held by `holder`) holds downloads for `requested` from `now`, capped at
    /// ``maxLease``; zero or less lets it go. Returns the lease's length as held.
    @discardableResult
    package mutating func hold(lease: String, holder: String, for requested: Duration, at now: Duration) -> Duration {
        let length = ApplyMachine.leaseLength(requested)
        leases[lease] = length > .zero ? Lease(holder: holder, end: now + length) : nil
        while leases.count > Self.maxLeases, let first = leases.min(by: { $0.value.end < $1.value.end })?.key { leases[first] = nil }
        return length
    }

    /// Ends every lease whose id starts with `prefix` (all when empty).
    package mutating func release(prefix: String = "") {
        leases = prefix.isEmpty ? [:] : leases.filter { !$0.key.hasPrefix(prefix) }
    }

    /// Drops the leases that have ended by `now`.
    package mutating func expire(at now: Duration) {
        leases = leases.filter { $0.value.end > now }
    }

    /// The leases in force at `now`: their holders (sorted, each once) and the last end;
    /// nil when none holds.
    package func inForce(at now: Duration) -> (holders: [String], end: Duration)? {
        let live = leases.values.filter { $0.end > now }
        guard let end = live.map(\.end).max() else { return nil }
        return (Array(Set(live.map(\.holder))).sorted(), end)
    }

    /// Leases held, ended ones included until the next ``expire(at:)``.
    package var count: Int { leases.count }
}

/// The agent's download holds: ``DownloadHoldLeases`` on the injected clocks, read by the
/// download policy through `DownloadHolding` and taken by the page
/// (`WebAppLocalServer.holdDownloads(seconds)`, both hosts) or a local process (serve's
/// `POST /__clientctl/hold-downloads`).
package final class DownloadHolds: DownloadHolding {
    private let now: @Sendable () -> Date
    private let clock: MonotonicClock
    private struct State {
        var leases = DownloadHoldLeases()
        /// What the tasks in ``waitForHold()`` wait at: opened when a lease is taken, and
        /// replaced by a closed one for the waits after it.
        var taken = Latch()
    }
    private let state = Mutex(State())

    /// - Parameters:
    ///   - now: the device's time, to say when a hold ends on the wall clock.
    ///   - clock: the monotonic clock leases run on.
    package init(now: @escaping @Sendable () -> Date = { Date() }, clock: MonotonicClock = .continuous) {
        self.now = now
        self.clock = clock
    }

    /// `lease` (held by `holder`: `the page`, `process 'backup'`) holds downloads back for
    /// `duration`, at most ``DownloadHoldLeases/maxLease`` (renew before it ends); zero lets
    /// go. Returns when the lease ends on the device's time (now when let go). A download in
    /// flight stops at once (``waitForHold()`` returns).
    @discardableResult
    package func hold(lease: String, holder: String, for duration: Duration) -> Date {
        let t = now()
        let (length, taken) = state.withLock { state -> (Duration, Latch?) in
            let m = clock.now
            state.leases.expire(at: m)
            let length = state.leases.hold(lease: lease, holder: holder, for: duration, at: m)
            guard length > .zero else { return (length, nil) }
            defer { state.taken = Latch() }
            return (length, state.taken)
        }
        taken?.open()
        return t.addingTimeInterval(length.inSeconds)
    }

    /// Ends every lease whose id starts with `prefix` (all when empty): their page, web
    /// process or host is gone.
    package func release(prefix: String = "") {
        state.withLock { $0.leases.release(prefix: prefix) }
    }

    /// The hold in force now: its holders and when its last lease ends on the device's time.
    package func current() -> DownloadHold? {
        let t = now()
        return state.withLock { state -> DownloadHold? in
            let m = clock.now
            state.leases.expire(at: m)
            guard let held = state.leases.inForce(at: m) else { return nil }
            return DownloadHold(holders: held.holders, until: t.addingTimeInterval((held.end - m).inSeconds))
        }
    }

    /// Returns at once when a lease holds now, else once one is taken.
    /// - Throws: `CancellationError` when the waiting task is cancelled.
    package func waitForHold() async throws {
        try Task.checkCancellation()
        let taken = state.withLock { state -> Latch? in
            state.leases.inForce(at: clock.now) != nil ? nil : state.taken
        }
        try await taken?.wait()
    }

    /// Tasks waiting in ``waitForHold()`` now (for tests).
    package var waiting: Int { state.withLock { $0.taken }.waiting }

    /// Returns once `count` tasks wait in ``waitForHold()`` for the next lease (for tests:
    /// the downloads they started are waiting), once a lease is taken, or on cancellation.
    package func waitForWaiting(_ count: Int) async {
        await state.withLock { $0.taken }.waitForWaiters(count)
    }
}

import ClientUpdater
import Foundation
import NIOConcurrencyHelpers

/// Measures how long a transfer has been waiting for the network, to enforce the stall
/// timeout ("no byte for N seconds"), and how long it has run, for its time limit.
///
/// Only time spent waiting for the server counts: time inside the caller's sink (a slow
/// disk, hashing) does not, so back-pressure never looks like a stalled server. The
/// decision is a pure function of the injected clock readings (``isStalled(now:)``);
/// ``watch(url:)`` polls it on the real clock.
final class StallWatch: Sendable {
    let idleTimeout: Double
    let timeLimit: Double?
    private let started: UInt64
    private let now: @Sendable () -> UInt64
    /// Uptime (ns) since which the transfer has been waiting, or nil while the sink runs.
    private let waitingSince: NIOLockedValueBox<UInt64?>

    init(idleTimeout: Double, timeLimit: Double? = nil,
         now: @escaping @Sendable () -> UInt64 = { DispatchTime.now().uptimeNanoseconds }) {
        self.idleTimeout = idleTimeout
        self.timeLimit = timeLimit
        self.now = now
        started = now()
        waitingSince = NIOLockedValueBox(started)
    }

    /// The transfer starts waiting for the network (a connection, a head, a chunk).
    func waiting() {
        let t = now()
        waitingSince.withLockedValue { $0 = $0 ?? t }
    }

    /// Something arrived: the caller's code runs now.
    func arrived() { waitingSince.withLockedValue { $0 = nil } }

    /// Whether the transfer has been waiting for at least the idle timeout at `now`.
    func isStalled(now: UInt64) -> Bool {
        // A reading taken before the wait began is not a stall.
        guard let since = waitingSince.withLockedValue({ $0 }), now > since else { return false }
        return Double(now - since) / 1e9 >= idleTimeout
    }

    /// Whether the transfer has run past its time limit now.
    func isOverTime() -> Bool { isOverTime(now: now()) }

    /// Whether the transfer has run past its time limit at `now`.
    func isOverTime(now: UInt64) -> Bool {
        guard let timeLimit else { return false }
        return Double(now &- started) / 1e9 >= timeLimit
    }

    /// Returns normally never: throws `.network` with ``TransportFailure/timedOut(seconds:)``
    /// once stalled or ``TransportFailure/deadlineExceeded(seconds:)`` once over time, or
    /// `CancellationError` when the transfer ended first.
    func watch(url: URL) async throws -> Never {
        let step = UInt64(min(max(min(idleTimeout, timeLimit ?? idleTimeout) / 8, 0.005), 0.25) * 1e9)
        while true {
            try await Task.sleep(nanoseconds: step)
            let t = now()
            if isOverTime(now: t) { throw UpdaterError.network(url, .deadlineExceeded(seconds: timeLimit ?? 0)) }
            if isStalled(now: t) { throw UpdaterError.network(url, .timedOut(seconds: idleTimeout)) }
        }
    }
}

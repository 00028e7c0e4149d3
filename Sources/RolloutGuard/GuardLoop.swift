import ClientFoundation
import Foundation

extension RolloutGuardPass {
    /// `rollout guard --every`: a pass every `interval` on `clock` (measured from each
    /// pass's start) until `stop` is requested, which ends the wait between passes at once;
    /// a pass under way, bounded by the fleet's and the signers' time limits, finishes first.
    ///
    /// A pass that fails for a while (a ``ClientFoundation/FailureKind`` `.unavailable`
    /// or `.tempFail`: the collector, a signer or the store down) goes to `failed` and the
    /// next pass is tried; any other failure ends the loop and is thrown.
    public func repeating<C: Clock>(
        every interval: Duration, clock: C, until stop: GuardStop, passed: (GuardOutcome) -> Void, failed: (any ClientctlError) -> Void
    ) async throws where C.Duration == Duration {
        while !stop.isRequested && !Task.isCancelled {
            let started = clock.now
            do {
                passed(try await run())
            } catch let error as any ClientctlError where error.kind == .unavailable || error.kind == .tempFail {
                failed(error)
            }
            await stop.wait(until: started.advanced(by: interval), on: clock)
        }
    }
}

/// A stop asked for from outside the guard's loop (a signal handler), read between passes:
/// it wakes the wait for the next pass at once. ClientFoundation's `Latch`, opened once.
public final class GuardStop: Sendable {
    private let latch = Latch()

    public init() {}

    /// Whether a stop was requested.
    public var isRequested: Bool { latch.isOpen }

    /// Requests the stop: every wait ends now, and every later one at once.
    public func request() {
        latch.open()
    }

    /// Runs `body` while each of `signals` (SIGTERM, SIGINT) requests this stop instead of
    /// ending the process.
    public func requested(by signals: [Int32], during body: () async throws -> Void) async rethrows {
        let sources = signals.map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { self.request() }
            source.resume()
            return source
        }
        defer { for source in sources { source.cancel() } }
        try await body()
    }

    /// Returns at `deadline` on `clock`, when the stop is requested, or when the task is
    /// cancelled, whichever comes first.
    func wait<C: Clock>(until deadline: C.Instant, on clock: C) async {
        _ = await latch.wait(until: deadline, on: clock)
    }
}

import ClientFoundation
import Foundation
import Synchronization

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
/// it wakes the wait for the next pass at once.
public final class GuardStop: Sendable {
    private struct State {
        var requested = false
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter = 0
    }
    private let state = Mutex(State())

    public init() {}

    /// Whether a stop was requested.
    public var isRequested: Bool { state.withLock { $0.requested } }

    /// Requests the stop: every wait ends now, and every later one at once.
    public func request() {
        let waiters = state.withLock { state in
            state.requested = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
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
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await clock.sleep(until: deadline, tolerance: nil) }
            group.addTask { await self.requestedOrCancelled() }
            _ = await group.next()
            group.cancelAll()
        }
    }

    /// Returns once the stop is requested or the task is cancelled.
    private func requestedOrCancelled() async {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state in
                    if state.requested || Task.isCancelled { return true }
                    state.waiters[id] = waiter
                    return false
                }
                if now { waiter.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}

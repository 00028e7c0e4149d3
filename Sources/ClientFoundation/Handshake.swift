import Synchronization

/// A value told once and awaited by any number of tasks: the agent's start-up report, a
/// listener's bound port, the outcome of the apply driver's switch in flight. The first
/// ``resolve(_:)`` wins and every waiter, now and later, gets it; a waiter whose task is
/// cancelled stops waiting with `CancellationError` (the others go on waiting).
///
/// One of the device's few waiting primitives (docs/concurrency.md#waits-latches-and-rate-caps):
/// ``Latch`` is a handshake without a value, ``WakeSignal`` a wake-up that comes again.
package final class Handshake<Value: Sendable>: Sendable {
    private struct State {
        var result: Result<Value, any Error>?
        var waiting: [UInt64: CheckedContinuation<Value, any Error>] = [:]
        var nextWaiter: UInt64 = 0
        /// Tasks in ``waitForWaiters(_:)``: how many waiters each waits for.
        var watchers: [UInt64: (count: Int, continuation: CheckedContinuation<Void, Never>)] = [:]

        /// Removes and returns the watchers whose count of waiters is reached.
        mutating func satisfiedWatchers() -> [CheckedContinuation<Void, Never>] {
            let ids = watchers.filter { $0.value.count <= waiting.count }.map(\.key)
            return ids.compactMap { watchers.removeValue(forKey: $0)?.continuation }
        }
    }
    private let state = Mutex(State())

    /// A handshake nothing has been told yet.
    package init() {}

    /// Whether the value (or its failure) has been told.
    package var isResolved: Bool { state.withLock { $0.result != nil } }

    /// Tasks waiting in ``value()`` now.
    package var waiting: Int { state.withLock { $0.waiting.count } }

    /// Tells every waiter, now and later, `result`; again is a no-op.
    package func resolve(_ result: Result<Value, any Error>) {
        let (waiting, watchers) = state.withLock { state -> ([CheckedContinuation<Value, any Error>], [CheckedContinuation<Void, Never>]) in
            guard state.result == nil else { return ([], []) }
            state.result = result
            defer {
                state.waiting = [:]
                state.watchers = [:]
            }
            return (Array(state.waiting.values), state.watchers.values.map(\.continuation))
        }
        for continuation in waiting { continuation.resume(with: result) }
        for watcher in watchers { watcher.resume() }
    }

    /// The value once told.
    /// - Throws: the failure told, or `CancellationError` when the waiting task is cancelled first.
    package func value() async throws -> Value {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let (now, watchers) = state.withLock { state -> (Result<Value, any Error>?, [CheckedContinuation<Void, Never>]) in
                    if let result = state.result { return (result, []) }
                    if Task.isCancelled { return (.failure(CancellationError()), []) }
                    state.waiting[id] = continuation
                    return (nil, state.satisfiedWatchers())
                }
                if let now { continuation.resume(with: now) }
                for watcher in watchers { watcher.resume() }
            }
        } onCancel: {
            let continuation = state.withLock { $0.waiting.removeValue(forKey: id) }
            continuation?.resume(throwing: CancellationError())
        }
    }

    /// Returns once `count` tasks wait in ``value()`` at once (a test's event: the tasks it
    /// started are at the handshake), once the value is told (no one waits any more), or
    /// when the task is cancelled.
    package func waitForWaiters(_ count: Int) async {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.waiting.count >= count || state.result != nil || Task.isCancelled { return true }
                    state.watchers[id] = (count, continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.watchers.removeValue(forKey: id) }?.continuation.resume()
        }
    }
}

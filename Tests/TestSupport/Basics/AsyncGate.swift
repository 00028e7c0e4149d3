import Foundation
import Synchronization

/// A counting semaphore for tasks: ``enter()`` suspends (never blocks a thread) while
/// `limit` holders are inside; ``leave()`` lets the longest waiter in.
public final class AsyncGate: Sendable {
    private struct State {
        var inside = 0
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let limit: Int
    private let state = Mutex(State())

    public init(limit: Int) { self.limit = max(1, limit) }

    /// Waits for a place; throws `CancellationError` if the task was cancelled before.
    public func enter() async throws {
        try Task.checkCancellation()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let admitted = state.withLock { state -> Bool in
                if state.inside < limit {
                    state.inside += 1
                    return true
                }
                state.waiters.append(continuation)
                return false
            }
            if admitted { continuation.resume() }
        }
    }

    /// Gives the place back (to the longest waiter, if any).
    public func leave() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiters.isEmpty {
                state.inside -= 1
                return nil
            }
            return state.waiters.removeFirst()  // the place passes on; `inside` stays
        }
        next?.resume()
    }
}

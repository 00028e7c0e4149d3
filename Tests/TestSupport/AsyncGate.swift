import Foundation

/// A counting semaphore for tasks: ``enter()`` suspends (never blocks a thread) while
/// `limit` holders are inside; ``leave()`` lets the longest waiter in.
public final class AsyncGate: @unchecked Sendable {
    // @unchecked Sendable: `inside` and `waiters` are only touched under `lock`.
    private let lock = NSLock()
    private let limit: Int
    private var inside = 0
    private var waiters: [CheckedContinuation<Void, Never>] = []

    public init(limit: Int) { self.limit = max(1, limit) }

    /// Waits for a place; throws `CancellationError` if the task was cancelled before.
    public func enter() async throws {
        try Task.checkCancellation()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let admitted = lock.withLock { () -> Bool in
                if inside < limit {
                    inside += 1
                    return true
                }
                waiters.append(continuation)
                return false
            }
            if admitted { continuation.resume() }
        }
    }

    /// Gives the place back (to the longest waiter, if any).
    public func leave() {
        let next = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            if waiters.isEmpty {
                inside -= 1
                return nil
            }
            return waiters.removeFirst()  // the place passes on; `inside` stays
        }
        next?.resume()
    }
}

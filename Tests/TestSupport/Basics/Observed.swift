import Synchronization

/// A value the test's own code changes (a counter a callback bumps, the requests a fake
/// server saw) that a test waits on by its changes rather than by polling: each
/// ``update(_:)`` wakes the waiters, and each checks its condition again.
///
/// For what a test cannot hear change (another process, the kernel, a file) there is
/// ``Poll/until(_:timeout:every:_:)``.
public final class Observed<Value: Sendable>: Sendable {
    private struct State {
        var value: Value
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var next = 0
    }
    private let state: Mutex<State>

    public init(_ value: Value) { state = Mutex(State(value: value)) }

    /// The value now.
    public var value: Value { state.withLock { $0.value } }

    /// Changes the value and wakes every waiter; returns what `change` returns.
    @discardableResult
    public func update<Result>(_ change: (inout Value) -> Result) -> Result {
        let (result, woken) = state.withLock { s -> (Result, [CheckedContinuation<Void, Never>]) in
            let result = change(&s.value)
            defer { s.waiters = [:] }
            return (result, Array(s.waiters.values))
        }
        for waiter in woken { waiter.resume() }
        return result
    }

    /// Waits until `condition` holds for the value, checked at once and after each change;
    /// returns the value it held for.
    /// - Throws: ``HarnessError`` naming `what` and the value when `timeout` passes first
    ///   (the bound only ends a hang).
    @discardableResult
    public func wait(
        for what: String, timeout: Duration = .seconds(30), until condition: @escaping @Sendable (Value) -> Bool
    ) async throws -> Value {
        let met = await withTaskGroup(of: Bool.self) { group in
            group.addTask { await self.changes(until: condition) }
            group.addTask {
                try? await Task.sleep(for: timeout)  // bounds a hang; measures nothing
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        let now = value
        guard met || condition(now) else { throw HarnessError("timed out after \(timeout) waiting for \(what); the value is \(now)") }
        return now
    }

    /// Returns true once `condition` holds, false when cancelled first.
    private func changes(until condition: @Sendable (Value) -> Bool) async -> Bool {
        while !Task.isCancelled {
            let id = state.withLock { s -> Int in
                s.next += 1
                return s.next
            }
            // The check and the registration are one step under the lock: a change after the
            // check wakes this waiter.
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let resumeNow = state.withLock { s -> Bool in
                        if condition(s.value) || Task.isCancelled { return true }
                        s.waiters[id] = continuation
                        return false
                    }
                    if resumeNow { continuation.resume() }
                }
            } onCancel: {
                let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
                waiter?.resume()
            }
            if condition(value) { return true }
        }
        return false
    }
}

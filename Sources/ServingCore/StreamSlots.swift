import Synchronization

/// Bounds how many file bodies stream at once (docs/native-shell.md#ranges-and-memory):
/// a body takes a slot before its file is opened and gives it back when its last byte is
/// handed over or its reader went away. Past the limit, bodies wait their turn in the
/// order they came: every request is still answered, and what a page asks for at once
/// (128 parallel ranges of a media segment loader, say) never holds more than `limit`
/// files open and streaming.
package final class StreamSlots: Sendable {
    /// Most bodies streaming at once.
    package let limit: Int
    private struct State {
        var busy = 0
        var waiting: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())

    package init(limit: Int) {
        precondition(limit > 0, "a stream limit of at least one")
        self.limit = limit
    }

    /// Waits for a slot (first come, first served); the caller calls ``release()`` once.
    package func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { state -> Bool in
                guard state.busy < limit else {
                    state.waiting.append(continuation)
                    return false
                }
                state.busy += 1
                return true
            }
            if granted { continuation.resume() }
        }
    }

    /// Gives a slot back: to the longest waiting body, or to the pool.
    package func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard state.waiting.isEmpty else { return state.waiting.removeFirst() }
            state.busy -= 1
            return nil
        }
        next?.resume()
    }

    /// Bodies streaming now, and bodies waiting for a slot.
    package var usage: (streaming: Int, waiting: Int) {
        state.withLock { ($0.busy, $0.waiting.count) }
    }
}

import Foundation
import Synchronization

/// Opens once the engine has chosen the first version to serve. The view starts loading
/// the app at once, in parallel with the engine's start-up (its web and network processes
/// start meanwhile); scheme requests that arrive before the version is known wait here.
package final class FirstVersionLatch: Sendable {
    private struct State {
        var isOpen = false
        var waiting: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())

    package init() {}

    /// Returns once the latch is open.
    package func wait() async {
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state -> Bool in
                if state.isOpen { return true }
                state.waiting.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    /// Opens the latch (again is a no-op) and lets every waiting request go on.
    package func open() {
        let released = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.isOpen = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in released { continuation.resume() }
    }
}

extension FirstVersionLatch {
    /// Returns once the latch is open or `limit` has passed, whichever comes first.
    package func wait(atMost limit: Duration) async {
        let resumed = Mutex(false)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeOnce: @Sendable () -> Void = {
                let first = resumed.withLock { done -> Bool in
                    defer { done = true }
                    return !done
                }
                if first { continuation.resume() }
            }
            Task {
                await self.wait()
                resumeOnce()
            }
            Task {
                try? await Task.sleep(for: limit)
                resumeOnce()
            }
        }
    }
}

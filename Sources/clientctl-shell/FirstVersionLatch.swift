import Foundation

/// Opens once the engine has chosen the first version to serve. The view starts loading
/// the app at once, in parallel with the engine's start-up (its web and network processes
/// start meanwhile); scheme requests that arrive before the version is known wait here.
final class FirstVersionLatch: @unchecked Sendable {
    // `isOpen` and `waiting` are guarded by `lock`.
    private let lock = NSLock()
    private var isOpen = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// Returns once the latch is open.
    func wait() async {
        await withCheckedContinuation { continuation in
            let resumeNow = lock.withLock { () -> Bool in
                if isOpen { return true }
                waiting.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    /// Opens the latch (again is a no-op) and lets every waiting request go on.
    func open() {
        let released = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            isOpen = true
            defer { waiting = [] }
            return waiting
        }
        for continuation in released { continuation.resume() }
    }
}

extension FirstVersionLatch {
    /// Returns once the latch is open or `limit` has passed, whichever comes first.
    func wait(atMost limit: Duration) async {
        let resumed = NSLock()
        nonisolated(unsafe) var done = false
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeOnce: @Sendable () -> Void = {
                let first = resumed.withLock { () -> Bool in
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

import Foundation

/// Runs blocking work (a socket read with a timeout, a wait for a child) on a thread of its
/// own and suspends the calling task until it is done.
///
/// Swift Testing runs the suite's tests on the cooperative pool, one thread per core; a test
/// that blocks one of them for seconds starves the in-process servers and timers of every
/// test beside it.
public func offload<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
    }
}

/// Runs async `work` with a thread of its own as its preferred executor, so the
/// synchronous stretches inside it (a publish hashing and compressing for seconds) run
/// there and not on the cooperative pool.
public func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) async throws -> T {
    let executor = ThreadExecutor()
    defer { executor.stop() }
    return try await withTaskExecutorPreference(executor) { try await work() }
}

/// A task executor that runs its jobs one after another on one thread.
private final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    // @unchecked Sendable: `jobs` and `stopped` are only touched under `condition`.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var stopped = false

    init() {
        Thread.detachNewThread { [self] in loop() }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    func stop() {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
    }

    private func loop() {
        while true {
            condition.lock()
            while jobs.isEmpty, !stopped { condition.wait() }
            guard !jobs.isEmpty else {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}

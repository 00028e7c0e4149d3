import Synchronization

/// A serial executor whose jobs run on the ``BlockingExecutor``'s threads: an actor that
/// does blocking file work in its isolated code runs there instead of on Swift
/// concurrency's cooperative pool (docs/concurrency.md).
///
/// The `Updater` is such an actor: its locked sections write `state.json` with an `fsync`,
/// organize a version at a switch and delete versions by retention, synchronously, because
/// they read and change the actor's watchdog state. On this executor they hold one of the
/// executor's threads, never one of the cooperative pool's (two on a 2-core device).
///
/// Jobs run one at a time in the order they were enqueued. While the actor has jobs, one
/// executor thread drains them; it hands the thread back after a batch, so a busy actor
/// queues behind other blocking work instead of keeping a thread for itself.
package final class BlockingSerialExecutor: SerialExecutor, Sendable {
    private struct Queue: ~Copyable {
        var jobs: [UnownedJob] = []
        var next = 0
        var draining = false
    }

    /// Jobs run per turn on an executor thread before it is handed back.
    private static let batch = 32
    private let executor: BlockingExecutor
    private let queue = Mutex(Queue())

    /// An executor for one actor, on `executor` (the shared one by default).
    package init(on executor: BlockingExecutor = .shared) {
        self.executor = executor
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let start = queue.withLock { queue -> Bool in
            queue.jobs.append(job)
            guard !queue.draining else { return false }
            queue.draining = true
            return true
        }
        if start { executor.submit { self.drain() } }
    }

    package func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Runs up to ``batch`` jobs, then submits itself again while jobs are left.
    private func drain() {
        for _ in 0..<Self.batch {
            guard let job = nextJob() else { return }
            job.runSynchronously(on: asUnownedSerialExecutor())
        }
        let more = queue.withLock { queue -> Bool in
            guard queue.next < queue.jobs.count else {
                queue.draining = false
                return false
            }
            return true
        }
        if more { executor.submit { self.drain() } }
    }

    /// The oldest job, or nil (and no longer draining) when there is none.
    private func nextJob() -> UnownedJob? {
        queue.withLock { queue -> UnownedJob? in
            guard queue.next < queue.jobs.count else {
                queue.jobs.removeAll(keepingCapacity: true)
                queue.next = 0
                queue.draining = false
                return nil
            }
            let job = queue.jobs[queue.next]
            queue.next += 1
            if queue.next >= 64, queue.next * 2 >= queue.jobs.count {
                queue.jobs.removeFirst(queue.next)
                queue.next = 0
            }
            return job
        }
    }
}

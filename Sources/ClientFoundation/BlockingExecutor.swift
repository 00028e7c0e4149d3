import NIOPosix
import Synchronization

/// The one place blocking work runs, on the device and on the release side: file-system
/// calls, libarchive reading and writing, zstd patching and hashing go through ``run(_:)``
/// on a fixed set of threads of their own, never on Swift concurrency's cooperative pool
/// (docs/concurrency.md).
///
/// The cooperative pool has one thread per core: two on the devices this runs on. One
/// blocking call holding a pool thread for seconds (unpacking 300 MB, hashing a tree)
/// halves what the host's tasks and `serve`'s request handling get; two stall them
/// outright. Work sent here waits in a FIFO queue for one of ``threadCount`` threads
/// instead, so however much blocking work is asked for at once, at most ``threadCount``
/// threads run it and the cooperative pool stays free.
package final class BlockingExecutor: Sendable {
    /// Threads of the shared executor: 4 on every device, whatever its core count.
    ///
    /// Fixed so a device behaves the same on 2 and 8 cores, and bounded so a burst (a
    /// page's 200 asset reads, a fleet of roots checking at once) queues instead of
    /// spawning threads. Four because the longest jobs (one install's unpack, patch or
    /// tree hash: the updater runs one install per root at a time) take one thread while
    /// `serve`'s short reads keep the others, and most of this work waits on the disk
    /// rather than using a core, so more threads than the 2 cores still helps.
    package static let threadCount = 4

    /// The executor every call site shares, started on first use and never stopped.
    package static let shared = BlockingExecutor(
        pool: NIOThreadPool._makePerpetualStartedPool(numberOfThreads: threadCount, threadNamePrefix: "clientctl-blocking-"))

    private let pool: NIOThreadPool

    /// Runs a piece of blocking work somewhere else than the threads (``runAll(on:)``).
    package typealias Runner = @Sendable (@escaping @Sendable () -> Void) -> Void
    /// Where every executor sends its work instead of its threads, when set.
    private static let runner = Mutex<Runner?>(nil)

    /// From now on, every executor's work goes to `runner` instead of its threads, for the
    /// rest of the process: the device simulator's agents' world (docs/simulation.md) runs all
    /// of the process's work on its one thread, in the order it was asked for, so a seed
    /// replays whatever the machine's load. Nothing else calls it.
    package static func runAll(on runner: @escaping Runner) {
        Self.runner.withLock { $0 = runner }
    }

    private init(pool: NIOThreadPool) {
        self.pool = pool
    }

    /// A started executor of its own with `threads` threads (tests); stop it with
    /// ``shutdown()``.
    package convenience init(threads: Int) {
        let pool = NIOThreadPool(numberOfThreads: max(1, threads))
        pool.start()
        self.init(pool: pool)
    }

    /// Runs `work` on ``shared`` (see ``run(_:)``).
    package static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await shared.run(work)
    }

    /// Runs `work` on one of the executor's threads once one is free (FIFO), suspending the
    /// caller meanwhile, and returns its result or rethrows its error.
    ///
    /// Work once asked for always runs, even when the calling task is cancelled meanwhile:
    /// blocking steps come in sequences (write, then rename) that must not stop halfway.
    package func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            if let runner = Self.runner.withLock({ $0 }) {
                runner { continuation.resume(with: Result { try work() }) }
                return
            }
            pool.submit { state in
                guard case .active = state else {
                    continuation.resume(throwing: FileSystemError(.io, "the blocking-work executor was shut down"))
                    return
                }
                continuation.resume(with: Result { try work() })
            }
        }
    }

    /// Runs `work` on one of the executor's threads once one is free, without waiting for it
    /// (the ``BlockingSerialExecutor`` drains an actor's jobs this way).
    package func submit(_ work: @escaping @Sendable () -> Void) {
        if let runner = Self.runner.withLock({ $0 }) { return runner(work) }
        pool.submit { _ in work() }
    }

    /// Stops an executor made with ``init(threads:)``: running work finishes, queued work
    /// that has not started fails.
    package func shutdown() async throws {
        try await pool.shutdownGracefully()
    }
}

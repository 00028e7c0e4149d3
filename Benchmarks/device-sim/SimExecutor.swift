import ClientFoundation
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The one thread every task of the agents' world runs on (`--agents`, docs/simulation.md#the-agents-world),
/// FoundationDB's single-threaded simulation in Swift's terms: every job Swift concurrency
/// would hand to its pool (every task, every default actor's turn, every continuation
/// resumed) and every piece of blocking work (`BlockingExecutor`: file writes, unpacking,
/// hashing) waits in one queue and runs on one thread, in the order it was asked for. No
/// two pieces of work run at once, so the order of events is the seed's, whatever the
/// machine's load. And the simulation knows when the world is still: the queue is empty
/// and every task waits (on the simulated clock, or on another task), so it may move time
/// on to the next deadline, as a discrete-event simulator does, and never sooner.
///
/// It takes over the whole process (the runtime's hook for the global executor), so the
/// agents' world runs in a process of its own, and the hook is never undone.
final class SimExecutor: SerialExecutor, @unchecked Sendable {
    // @unchecked: the queue is guarded by `condition`, the counters are read on the
    // executor's one thread or under the lock.
    private enum Work {
        case job(UnownedJob)
        case blocking(@Sendable () -> Void)
    }
    private let condition = NSCondition()
    private var queue: [Work] = []
    private var head = 0
    /// Who waits for the world to be still (``still()``).
    private var stillWaiter: CheckedContinuation<Bool, Never>?
    /// Work run since the start, and since the world was last still.
    private(set) var ran = 0
    private var sinceStill = 0
    /// The thread that runs the work (``loop()``), for `SIM_TRACE`'s warning of work added
    /// from any other.
    private var loopThread: pthread_t?
    /// More work than this without a still moment is a world that never rests (a loop that
    /// does not wait on the clock): the run stops with a violation instead of spinning.
    static let maxBusy = 20_000_000

    static let shared = SimExecutor()

    private typealias Original = @convention(thin) (UnownedJob) -> Void
    private typealias Hook = @convention(thin) (UnownedJob, Original) -> Void

    /// Sends every job of the global executor and every piece of blocking work of the
    /// process here from now on, and starts the thread that runs them.
    static func takeOver() throws {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "swift_task_enqueueGlobal_hook") else {
            throw CocoaError(.featureUnsupported, userInfo: [NSLocalizedDescriptionKey: "this Swift runtime has no global executor hook"])
        }
        let hook: Hook = { job, _ in SimExecutor.shared.add(.job(job)) }
        symbol.assumingMemoryBound(to: Hook?.self).pointee = hook
        BlockingExecutor.runAll { work in SimExecutor.shared.add(.blocking(work)) }
        let thread = Thread { SimExecutor.shared.loop() }
        thread.name = "device-sim-world"
        thread.stackSize = 16 << 20
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) { add(.job(UnownedJob(job))) }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor { UnownedSerialExecutor(ordinary: self) }

    private func add(_ work: Work) {
        condition.lock()
        if AgentWorld.tracing, let loop = loopThread, pthread_equal(loop, pthread_self()) == 0 {
            AgentWorld.trace("work from another thread: " + Thread.callStackSymbols.prefix(14).joined(separator: "\n  "))
        }
        queue.append(work)
        condition.signal()
        condition.unlock()
    }

    /// Returns true when nothing is left to run but the caller: every other task waits. The
    /// caller is the simulation's driver, a task on this executor. False when the world ran
    /// ``maxBusy`` pieces of work without resting.
    func still() async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            condition.lock()
            stillWaiter = continuation
            condition.unlock()
        }
    }

    private func loop() {
        condition.lock()
        loopThread = pthread_self()
        condition.unlock()
        while true {
            condition.lock()
            while head == queue.count {
                queue.removeAll(keepingCapacity: true)
                head = 0
                if let waiter = stillWaiter {
                    stillWaiter = nil
                    sinceStill = 0
                    condition.unlock()
                    waiter.resume(returning: true)  // enqueues the driver's job: the queue is not empty any more
                    condition.lock()
                    continue
                }
                condition.wait()
            }
            let work = queue[head]
            head += 1
            if head >= 4096, head * 2 >= queue.count {
                queue.removeFirst(head)
                head = 0
            }
            ran += 1
            sinceStill += 1
            let restless = sinceStill > Self.maxBusy ? stillWaiter : nil
            if restless != nil { stillWaiter = nil }
            condition.unlock()
            restless?.resume(returning: false)
            switch work {
            case .job(let job): job.runSynchronously(on: asUnownedSerialExecutor())
            case .blocking(let body): body()
            }
        }
    }
}

import Foundation
import Synchronization
import Testing

@testable import ClientFoundation

/// The one executor of blocking work (docs/concurrency.md): bounded, and the cooperative
/// pool stays free while its threads block.
@Suite struct BlockingExecutorTests {
    /// Counts jobs inside the executor at once, and the most there ever were.
    final class Occupancy: Sendable {
        private struct State {
            var inside = 0
            var entered = 0
            var most = 0
        }
        private let state = Mutex(State())

        /// Returns how many jobs were inside before this one.
        @discardableResult
        func enter() -> Int {
            state.withLock { state in
                defer {
                    state.inside += 1
                    state.entered += 1
                    state.most = max(state.most, state.inside)
                }
                return state.inside
            }
        }

        func leave() { state.withLock { $0.inside -= 1 } }

        var current: (inside: Int, entered: Int, most: Int) { state.withLock { ($0.inside, $0.entered, $0.most) } }
    }

    /// Polls (yielding, never sleeping as synchronization) until `condition` holds.
    private func until(_ condition: () -> Bool) async {
        while !condition() { await Task.yield() }
    }

    @Test func runsAtMostItsThreadCountAtOnce() async throws {
        let threads = BlockingExecutor.threadCount
        let executor = BlockingExecutor(threads: threads)
        let occupancy = Occupancy()
        let release = DispatchSemaphore(value: 0)
        // The first `threads` jobs wait for a signal that only a later job sends, so while
        // they wait, every one of them is inside. On a bounded executor a later job cannot
        // start until one of them gave up (a deadline of 1 s); an unbounded one starts it
        // at once, beside all of them.
        let beside = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<threads {
                group.addTask {
                    try await executor.run {
                        occupancy.enter()
                        defer { occupancy.leave() }
                        _ = release.wait(timeout: .now() + 1)
                        return 0
                    }
                }
            }
            await until { occupancy.current.entered == threads }
            for _ in 0..<3 {
                group.addTask {
                    try await executor.run {
                        let others = occupancy.enter()
                        defer { occupancy.leave() }
                        for _ in 0..<threads { release.signal() }
                        return others
                    }
                }
            }
            return try await group.reduce(0) { max($0, $1) }
        }
        try await executor.shutdown()
        #expect(beside < threads, "a job started while \(threads) jobs held every thread")
        #expect(occupancy.current.most <= threads)
        #expect(occupancy.current.entered == threads + 3)
    }

    @Test func cooperativePoolStaysFreeWhileEveryThreadBlocks() async throws {
        let threads = BlockingExecutor.threadCount
        let executor = BlockingExecutor(threads: threads)
        let occupancy = Occupancy()
        let release = DispatchSemaphore(value: 0)
        let blockers = Task {
            try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<threads {
                    group.addTask {
                        try await executor.run {
                            occupancy.enter()
                            defer { occupancy.leave() }
                            // A deadline so a broken executor fails the test instead of hanging it.
                            return release.wait(timeout: .now() + 30) == .success
                        }
                    }
                }
                return try await group.reduce(true) { $0 && $1 }
            }
        }
        // `entered`, not `inside`: an executor running jobs on the cooperative pool would
        // never hold them all at once; this way it fails below instead of hanging here.
        await until { occupancy.current.entered == threads }
        // More tasks than the cooperative pool has threads, each needing one: they all
        // finish while every executor thread is still blocked.
        let width = 2 * ProcessInfo.processInfo.activeProcessorCount
        let sum = await withTaskGroup(of: Int.self) { group in
            for i in 0..<width { group.addTask { i } }
            return await group.reduce(0, +)
        }
        let stillBlocked = occupancy.current.inside
        for _ in 0..<threads { release.signal() }
        let released = try await blockers.value
        try await executor.shutdown()
        #expect(sum == width * (width - 1) / 2)
        #expect(stillBlocked == threads)
        #expect(released, "the blocked jobs waited out their deadline")
    }

    @Test func sharedExecutorReturnsResultsAndRethrows() async throws {
        #expect(try await BlockingExecutor.run { 6 * 7 } == 42)
        await #expect(throws: FileSystemError.self) {
            try await BlockingExecutor.run { throw FileSystemError(.io, "boom") }
        }
    }
}

import Foundation
import NIOCore
import NIOPosix
import Synchronization
import TestSupport
import Testing

@testable import ClientServer

/// The beat `serve` sends systemd's WATCHDOG=1 from: it runs while every event loop of the
/// group runs tasks, stops while one of them hangs, and comes back when it is free again.
@Suite struct LoopHeartbeatTests {
    /// Counts calls, from any thread.
    final class Counter: Sendable {
        private let count = Mutex(0)
        func increment() { count.withLock { $0 += 1 } }
        var value: Int { count.withLock { $0 } }
    }

    @Test func aHungLoopStopsTheBeatsUntilItRunsAgain() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        let release = DispatchSemaphore(value: 0)
        do {
            try await Self.hangAndRelease(group, release: release)
        } catch {
            release.signal()  // a loop left hanging would keep the group from shutting down
            try await group.shutdownGracefully()
            throw error
        }
        try await group.shutdownGracefully()
    }

    static func hangAndRelease(_ group: MultiThreadedEventLoopGroup, release: DispatchSemaphore) async throws {
        let loops = Array(group.makeIterator())
        let beats = Counter()
        let task = LoopHeartbeat(interval: .milliseconds(10)) { beats.increment() }.start(on: loops[0], watching: loops)
        defer { task.cancel() }
        try await Poll.until("three beats") { beats.value >= 3 }

        // The second loop hangs in a task of its own until `release`.
        let entered = DispatchSemaphore(value: 0)
        loops[1].execute {
            entered.signal()
            release.wait()
        }
        try await offload { entered.wait() }
        // A round whose task the second loop ran just before it hung may still beat once.
        let hung = beats.value
        // The clock: ticks of the first loop at the beat's own interval, which keeps running.
        let ticks = Counter()
        let clock = loops[0].scheduleRepeatedTask(initialDelay: .zero, delay: .milliseconds(10)) { _ in ticks.increment() }
        try await Poll.until("twenty ticks of the first loop") { ticks.value >= 20 }
        clock.cancel()
        #expect(beats.value <= hung + 1, "beats went on while a loop hung: \(hung) → \(beats.value)")

        release.signal()
        let resumed = beats.value
        try await Poll.until("beats once the loop runs again") { beats.value >= resumed + 3 }
    }
}

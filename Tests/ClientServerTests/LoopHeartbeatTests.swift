import Foundation
import NIOCore
import NIOPosix
import TestSupport
import Testing

@testable import ClientServer

/// The beat `serve` sends systemd's WATCHDOG=1 from: it runs while every event loop of the
/// group runs tasks, stops while one of them hangs, and comes back when it is free again.
@Suite struct LoopHeartbeatTests {
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
        let beats = Observed(0)
        let task = LoopHeartbeat(interval: .milliseconds(10)) { beats.update { $0 += 1 } }.start(on: loops[0], watching: loops)
        defer { task.cancel() }
        try await beats.wait(for: "three beats") { $0 >= 3 }

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
        let ticks = Observed(0)
        let clock = loops[0].scheduleRepeatedTask(initialDelay: .zero, delay: .milliseconds(10)) { _ in ticks.update { $0 += 1 } }
        try await ticks.wait(for: "twenty ticks of the first loop") { $0 >= 20 }
        clock.cancel()
        #expect(beats.value <= hung + 1, "beats went on while a loop hung: \(hung) → \(beats.value)")

        release.signal()
        let resumed = beats.value
        try await beats.wait(for: "beats once the loop runs again") { $0 >= resumed + 3 }
    }
}

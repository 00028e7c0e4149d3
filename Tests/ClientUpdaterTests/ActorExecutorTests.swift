import ClientFoundation
import ClientUpdater
import DeviceSetup
import Foundation
import Synchronization
import TestSupport
import Testing

/// The `Updater` actor runs on the blocking-work executor (docs/concurrency.md): its locked
/// sections read and write the root synchronously (state, organizing, retention), and a
/// slow disk there holds one of the executor's threads, never the cooperative pool's.
@Suite struct ActorExecutorTests {
    /// Counts the listings in progress and holds each until released (or 20 s pass).
    final class SlowDisk: Sendable {
        private let state = Mutex((inside: 0, released: false))
        private let gate = DispatchSemaphore(value: 0)

        var inside: Int { state.withLock { $0.inside } }

        /// What the channel calls in the updater's locked section.
        func list() {
            let released = state.withLock { s -> Bool in
                s.inside += 1
                return s.released
            }
            if !released { _ = gate.wait(timeout: .now() + 20) }
            state.withLock { $0.inside -= 1 }
        }

        func release(_ waiters: Int) {
            state.withLock { $0.released = true }
            for _ in 0..<waiters { gate.signal() }
        }
    }

    /// More updaters than the cooperative pool has threads are each held inside a locked
    /// section at once (each on its own root), and meanwhile more tasks than the pool has
    /// threads all finish. If the actor's code ran on the cooperative pool, the held
    /// sections would take all of its threads: they could not all be inside at once, and
    /// nothing else would run until the disk let go.
    @Test func aSlowDiskInsideTheUpdaterHoldsNoCooperativeThread() async throws {
        let tmp = try TemporaryDirectory("actor-executor")
        let shell = try #require(Version("2.0.0"))
        let config = DeviceConfig(app: "com.example.notes", channelKind: .init(rawValue: "fake"), shellVersion: shell)
        let pool = ProcessInfo.processInfo.activeProcessorCount
        // Below the executor's thread count, so the lock attempts of the others still run.
        let held = min(pool + 1, BlockingExecutor.threadCount - 1)
        let disk = SlowDisk()

        let runs = (0..<held).map { n in
            Task {
                let layout = RootLayout(root: tmp("root-\(n)"))
                try FileManager.default.createDirectory(atPath: layout.root, withIntermediateDirectories: true)
                let channel = FakeChannel(storeDirectory: tmp("clients-\(n)"), shell: shell)
                channel.onListing = { disk.list() }
                let updater = Updater(layout: layout, config: config, channel: channel, logger: .quiet)
                return try await updater.collectGarbage(lockWait: .seconds(30))
            }
        }
        try await Poll.until("\(held) updaters inside their locked sections at once", timeout: 60) { disk.inside == held }

        let width = 2 * pool
        let sum = await withTaskGroup(of: Int.self) { group in
            for i in 0..<width { group.addTask { i } }
            return await group.reduce(0, +)
        }
        let stillInside = disk.inside
        disk.release(held * 4)
        for run in runs { _ = try await run.value }
        #expect(sum == width * (width - 1) / 2)
        #expect(stillInside == held, "the other tasks ran while every updater was held")
    }
}

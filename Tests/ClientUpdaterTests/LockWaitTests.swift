import ClientFoundation
import ClientUpdater
import DeviceSetup
import Foundation
import TestSupport
import Testing

/// Lock waits are asynchronous (docs/concurrency.md): an updater waiting for the root's
/// lock, held by another process, suspends and holds no thread of the cooperative pool.
@Suite struct LockWaitTests {
    /// `flock(1)` from util-linux holding `path` in a child process until its stdin closes.
    final class ForeignHolder {
        private let process = Process()
        private let stdin = Pipe()

        init(_ path: String) throws {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
            process.arguments = ["--exclusive", path, "cat"]
            process.standardInput = stdin
            process.standardOutput = FileHandle.nullDevice
            try process.runUnmasked()
        }

        /// Closes the child's stdin: `cat` ends, `flock` exits and the lock is free.
        func release() throws { try stdin.fileHandleForWriting.close() }

        deinit {
            if process.isRunning { process.terminate() }
        }
    }

    /// How many descriptors of this process are open on `path`: each waiting
    /// ``FileLock/acquire(path:wait:clock:)`` keeps one open between its attempts.
    static func openDescriptors(on path: String) -> Int {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return entries.filter { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)) == path }.count
    }

    /// More watchdog writers than the cooperative pool has threads wait for a lock another
    /// process holds; meanwhile other tasks (more than the pool's threads) all finish; once
    /// the other process lets go, every writer goes through. A wait that blocked its thread
    /// would leave the pool no thread: the writers could not all be waiting at once and the
    /// other tasks would not run until the writers gave up (`.locked`).
    @Test func waitingForTheRootLockHoldsNoCooperativeThread() async throws {
        let tmp = try TemporaryDirectory("lock-wait")
        let layout = RootLayout(root: tmp.path)
        let shell = try #require(Version("2.0.0"))
        let config = DeviceConfig(app: "com.example.notes", channelKind: .init(rawValue: "fake"), shellVersion: shell)
        _ = FileManager.default.createFile(atPath: layout.lock, contents: nil)
        let lockPath = URL(fileURLWithPath: layout.lock).resolvingSymlinksInPath().path

        let holder = try ForeignHolder(layout.lock)
        try await Poll.until("flock(1) to hold \(layout.lock)") { try FileLock.attempt(path: layout.lock) == nil }

        let pool = ProcessInfo.processInfo.activeProcessorCount
        let writers = pool + 2
        let waits = (0..<writers).map { n in
            let store = tmp("clients-\(n)")
            return Task {
                let channel = FakeChannel(storeDirectory: store, shell: shell)
                let updater = Updater(layout: layout, config: config, channel: channel, logger: .quiet)
                return try await updater.collectGarbage(lockWait: .seconds(240))
            }
        }
        try await Poll.until("\(writers) writers waiting for the lock at once", timeout: 180) {
            Self.openDescriptors(on: lockPath) == writers
        }
        let width = 2 * pool
        let sum = await withTaskGroup(of: Int.self) { group in
            for i in 0..<width { group.addTask { i } }
            return await group.reduce(0, +)
        }
        let stillWaiting = Self.openDescriptors(on: lockPath)
        try holder.release()
        for wait in waits {
            let report = try await wait.value
            #expect(report.removed.isEmpty)
        }
        #expect(sum == width * (width - 1) / 2)
        #expect(stillWaiting == writers, "a writer went through while another process held the lock")
        #expect(Self.openDescriptors(on: lockPath) == 0)
    }

    /// The wait for a lock runs on the injected clock: the manual clock, not real time,
    /// decides when a waiter gives up (`.locked`, naming how long it waited), and a lock the
    /// other process let go meanwhile is taken at the waiter's next attempt.
    @Test func theLockWaitRunsOnTheInjectedClock() async throws {
        let tmp = try TemporaryDirectory("lock-wait-clock")
        let path = tmp("lock")
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let holder = try ForeignHolder(path)
        try await Poll.until("flock(1) to hold \(path)") { try FileLock.attempt(path: path) == nil }
        let clock = ManualClock()

        let givesUp = Task { try await FileLock.acquire(path: path, wait: .seconds(30), clock: MonotonicClock(clock)) }
        try await clock.waitForSleeper()
        await clock.advance(by: .seconds(29))  // before its deadline: it tries again, and sleeps again
        try await clock.waitForSleeper()
        await clock.advance(by: .seconds(1))
        let error = await #expect(throws: UpdaterError.self) { try await givesUp.value }
        #expect(error?.code == .locked)
        #expect(error?.message == "\(path) is locked by another clientctl process; waited 30.0 s (retry later, or wait longer)")

        let takes = Task { try await FileLock.acquire(path: path, wait: .seconds(30), clock: MonotonicClock(clock)) }
        try await clock.waitForSleeper()
        try holder.release()
        try await Poll.until("flock(1) to let go of \(path)") { try FileLock.attempt(path: path) != nil }
        await clock.advance(by: .milliseconds(5))
        let lock = try await takes.value
        #expect(lock.path == path)
        #expect(try FileLock.attempt(path: path) == nil, "the waiter holds the lock")
    }
}

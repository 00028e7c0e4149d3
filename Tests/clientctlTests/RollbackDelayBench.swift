import ClientUpdater
import ClientUpdaterHTTP
import Foundation
import SignedArchive
import Synchronization
import TestSupport
import Testing

/// How long after its timeout a trial is rolled back while a check downloads and unpacks
/// an update trickled by the loopback server (`Scripts/bench/rollback-during-download`
/// runs it with a big archive). Real clocks; it prints the delay and asserts only the
/// order: the rollback came before the check ended. By default a small archive trickled
/// over about 3 s; `CLIENTCTL_BENCH_MB` sets the archive's size (incompressible data) and
/// `CLIENTCTL_BENCH_MBPS` the rate.
@Suite struct RollbackDelayBench {
    @Test func rollbackDelayWhileAnUpdateTrickles() async throws {
        let env = ProcessInfo.processInfo.environment
        let megabytes = env["CLIENTCTL_BENCH_MB"].flatMap(Int.init) ?? 0
        let rate = env["CLIENTCTL_BENCH_MBPS"].flatMap(Double.init) ?? 15
        let timeout = 2.0
        let d = try DeviceFixture()
        d.config.startupTimeoutSeconds = timeout
        let updater = try d.updater()
        try d.publish("1.0.0")
        _ = try await updater.install()
        try await updater.start(bridge: nil)
        try await updater.startupDidComplete()
        try d.publish("1.1.0")
        try await updater.checkForUpdates()

        let client = try ReleaseFolder.makeClient(at: d.tmp("src-2.0.0"), version: "2.0.0")
        if megabytes > 0 {
            var generator = SystemRandomNumberGenerator()
            for part in 0..<megabytes {
                let bytes = (0..<(1 << 20) / 8).map { _ in generator.next() as UInt64 }
                try bytes.withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: client + "/assets/blob\(part).bin")) }
            }
            let size = Double(megabytes << 20)
            d.faults.add(.drip(bytes: 256 << 10, every: Double(256 << 10) / (rate * 1_000_000)), path: "/stable/v2.0.0.tar.gz")
            print("bench: archive of \(megabytes) MiB trickled at \(rate) MB/s (\(String(format: "%.1f", size / rate / 1e6)) s)")
        } else {
            d.faults.add(.drip(bytes: 16, every: 0.15), path: "/stable/v2.0.0.tar.gz")
        }
        try d.releases.publish("2.0.0", archive: try ReleaseFolder.tarGz(of: client))

        let events = updater.events()
        try await updater.reload()
        let trialStart = ContinuousClock.now
        let ended = Atomic(false)
        let check = Task {
            let report = try await updater.checkForUpdates()
            ended.store(true, ordering: .sequentiallyConsistent)
            return report
        }
        var rolledBackAt: ContinuousClock.Instant?
        for await event in events {
            if case .watchdog(.failed) = event {
                rolledBackAt = ContinuousClock.now
                break
            }
        }
        let checkRunning = !ended.load(ordering: .sequentiallyConsistent)
        _ = try await check.value
        let checkEnded = ContinuousClock.now
        let rollback = try #require(rolledBackAt)
        let delay = (rollback - trialStart) - .seconds(timeout)
        let ms = { (d: Duration) in d.formatted(.units(allowed: [.milliseconds])) }
        print("bench: rollback \(ms(delay)) after the \(timeout) s timeout; the check ended \(ms(checkEnded - trialStart)) after the trial started")
        #expect(checkRunning, "the trial was rolled back while the check still ran")
        await updater.shutdown()
    }
}

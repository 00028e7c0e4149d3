import ClientFoundation
import ClientUpdater
import ClientUpdaterHTTP
import Foundation
import SignedArchive
import TestSupport
import Testing

@testable import ClientUpdater

/// A check downloads beside the updater's gate (docs/watchdog.md#what-takes-the-gate): a
/// trial's timeout, a switch and a second check are not queued behind a download. The
/// archive of 2.0.0 is held half way by a ``HeldTransport`` until each test has seen what
/// it looks for; the real archive channel, root and loopback server do the rest.
@Suite struct CheckBesideGateTests {
    final class Rig: Sendable {
        let d: DeviceFixture
        let held: HeldTransport
        let clock = ManualClock()
        let updater: Updater

        init(timeout: Double = 5) throws {
            d = try DeviceFixture()
            d.config.startupTimeoutSeconds = timeout
            held = HeldTransport(DefaultTransport(), holding: "/stable/v2.0.0.tar.gz")
            let downloader = Downloader(
                transport: held, retry: RetryPolicy(maxAttempts: 1, initialDelay: .zero, maxDelay: .zero), idleTimeout: .seconds(30))
            let channel = try ArchiveChannel(layout: d.layout, config: d.config, downloader: downloader, logger: .quiet)
            updater = Updater(layout: d.layout, config: d.config, channel: channel, logger: .quiet)
        }

        var state: DeviceState { StateStore.load(d.layout) }

        /// 1.0.0 runs and is acknowledged (the last known good version).
        func startOnGoodVersion() async throws {
            try d.publish("1.0.0")
            _ = try await updater.install()
            try await updater.start(bridge: nil, clock: MonotonicClock(clock))
            try await updater.startupDidComplete()
        }
    }

    /// The first event matching `match`, or nil when none came within `seconds` (a bound
    /// for a hang, not a measure of speed).
    static func event(
        in events: AsyncStream<UpdaterEvent>, within seconds: Double, _ match: @escaping @Sendable (UpdaterEvent) -> Bool
    ) async -> UpdaterEvent? {
        let found = await within(seconds) { () async -> UpdaterEvent? in
            for await event in events where match(event) { return event }
            return nil
        }
        guard case .success(let event)? = found else { return nil }
        return event
    }

    /// `body`'s result, or nil when it did not finish within `seconds`.
    static func within<T: Sendable>(_ seconds: Double, _ body: @escaping @Sendable () async throws -> T) async -> Result<T, any Error>? {
        await Deadline.race(.milliseconds(Int(seconds * 1000)), body)
    }

    @Test func aTrialTimesOutAndRollsBackWhileAnUpdateDownloads() async throws {
        let rig = try Rig(timeout: 5)
        try await rig.startOnGoodVersion()
        try rig.d.publish("1.1.0")
        try await rig.updater.checkForUpdates()
        try await rig.updater.reload()
        #expect(rig.state.trial?.version == "1.1.0")

        try rig.d.publish("2.0.0")
        let events = rig.updater.events(bufferingPolicy: .unbounded)
        let check = Task { try await rig.updater.checkForUpdates() }
        await rig.held.waitUntilHolding()
        try await rig.clock.waitForSleeper()
        await rig.clock.advance(by: .seconds(5))
        let failed = await Self.event(in: events, within: 60) {
            if case .watchdog(.failed) = $0 { return true }
            return false
        }
        let stillDownloading = rig.held.finished == 0
        let afterRollback = rig.state
        rig.held.release()
        let report = try await check.value

        #expect(failed == .watchdog(.failed(version: "1.1.0", reason: .timedOut, blacklisted: false, revertedTo: .installed("1.0.0"))))
        #expect(stillDownloading, "rolled back while the archive of 2.0.0 was still held half way")
        #expect(afterRollback.current == "1.0.0" && afterRollback.trial == nil && afterRollback.retry == ["1.1.0"])
        #expect(report.result == .installed && report.pending == "2.0.0")
        let state = rig.state
        #expect(state.current == "1.0.0" && state.pending == "2.0.0" && state.retry == ["1.1.0"] && state.lastKnownGood == "1.0.0")
        #expect(state.archive.highestAccepted == "2.0.0", "the channel's memory from the check is kept")
        await rig.updater.shutdown()
    }

    @Test func aSecondCheckJoinsTheRunningOne() async throws {
        let rig = try Rig()
        try await rig.startOnGoodVersion()
        try rig.d.publish("2.0.0")
        let manifestsBefore = rig.held.requests(to: "/stable/manifest.json")
        let first = Task { try await rig.updater.checkForUpdates() }
        await rig.held.waitUntilHolding()
        let second = Task { try await rig.updater.checkForUpdates() }
        var notJoined: (any Error)?
        do {
            try await Poll.until("the second check to join the first", timeout: 60) { await rig.updater.lifecycle.checkJoiners > 0 }
        } catch { notJoined = error }
        rig.held.release()
        let (a, b) = (try await first.value, try await second.value)

        #expect(notJoined == nil, "the second check waits on the first instead of queueing: \(String(describing: notJoined))")
        #expect(a == b && a.result == .installed && a.pending == "2.0.0")
        #expect(rig.held.requests(to: "/stable/manifest.json") - manifestsBefore == 1, "the feed is asked once")
        #expect(rig.held.requests(to: "/stable/v2.0.0.tar.gz") == 1, "the archive is downloaded once")
        await rig.updater.shutdown()
    }

    @Test func switchToPendingIsNotBlockedByARunningInstall() async throws {
        let rig = try Rig(timeout: 120)
        try await rig.startOnGoodVersion()
        try rig.d.publish("1.1.0")
        try await rig.updater.checkForUpdates()
        try rig.d.publish("2.0.0")
        let check = Task { try await rig.updater.checkForUpdates() }
        await rig.held.waitUntilHolding()
        let updater = rig.updater
        let switched = await Self.within(60) { try await updater.reload() }
        let stillDownloading = rig.held.finished == 0
        rig.held.release()
        let report = try await check.value

        #expect(try switched?.get().current == .installed("1.1.0"), "the switch finished while the install ran")
        #expect(stillDownloading)
        #expect(report.pending == "2.0.0")
        let state = rig.state
        #expect(state.current == "1.1.0" && state.trial?.version == "1.1.0" && state.pending == "2.0.0")
        await rig.updater.shutdown()
    }

    @Test func notesAndProgressArriveOnTheEventStreamInOrder() async throws {
        let rig = try Rig()
        try rig.d.publish("2.0.0")
        rig.held.release()
        let events = rig.updater.events(bufferingPolicy: .unbounded)
        let report = try await rig.updater.install()
        await rig.updater.shutdown()
        var progress: [Int64] = []
        for await event in events {
            if case .downloadProgress(let version, let completed, _) = event, version == "2.0.0" { progress.append(completed) }
        }
        #expect(report.result == .installed)
        #expect(progress.count >= 2, "the held transport delivers the archive in two chunks")
        #expect(progress == progress.sorted(), "progress arrives in the order it was reported")
    }
}

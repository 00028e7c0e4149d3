import ClientFoundation
import ClientUpdater
import FleetReports
import Foundation
import Synchronization
import TestSupport
import Testing

@testable import ClientEngine

/// The agent's count of a page's problems on a real root (docs/page-errors.md): its reports
/// in the root's journal, its period kept across a restart in `reports/page-errors.json`,
/// and the first hour's local rollback, only when the device allows it. The monotonic clock
/// is a manual one: nothing sleeps.
@Suite struct PageProblemsTests {
    /// A root on 1.1.0 (committed, 1.0.0 before it) that records reports.
    static func device(errorRollback: Bool) async throws -> DeviceFixture {
        let device = try DeviceFixture()
        device.config.reportURL = "http://127.0.0.1:9/"
        device.config.deviceSettings.errorRollback = errorRollback
        try device.config.save(device.layout)
        try await device.installAndCommit(["1.0.0", "1.1.0"])
        return device
    }

    /// The journal's `page-errors` and `rolled-back` reports.
    static func reports(_ device: DeviceFixture, _ type: ReportKind) -> [FleetReport] {
        ReportJournal(layout: device.layout).pending(maxReports: 2_000, maxBytes: 1 << 20).filter { $0.type == type }
    }

    @Test func aVersionFailingMostLoadsOfItsFirstHourGoesBackWhenTheDeviceAllowsIt() async throws {
        let device = try await Self.device(errorRollback: true)
        let engine = try DeviceEngine.open(device.layout, options: .init(logger: .quiet))
        let clock = ManualClock()
        let rolledBack = Observed<[String]>([])
        let problems = PageProblems(
            updater: engine.updater, clock: MonotonicClock(clock), allowRollback: true,
            rollbackEnded: { version in rolledBack.update { $0.append(version) } })
        // The loop carries the rollback out (in a task group of its own, never after it ends).
        let loop = Task { await problems.run() }
        for load in 0..<3 {
            problems.acknowledged(version: "1.1.0")
            if load != 1 { problems.pageErrors(12, messages: ["TypeError: boom (/app.js:3)"], version: "1.1.0") }
            await clock.advance(by: .seconds(60))
        }
        // Its end comes once its state and reports are written.
        try await rolledBack.wait(for: "1.1.0 rolled back on its own") { $0.contains("1.1.0") }
        let state = StateStore.load(device.layout)
        #expect(state.current == "1.0.0")
        #expect(state.blacklist.contains("1.1.0"))
        let rollback = Self.reports(device, .rolledBack).last
        #expect(rollback?.version == "1.1.0" && rollback?.reason == .pageErrors && rollback?.running == "1.0.0")
        // The version left the screen: what was counted of it is reported.
        problems.served("1.0.0")
        let counted = Self.reports(device, .pageErrors).filter { $0.version == "1.1.0" }
        #expect(counted.map(\.count).reduce(0) { $0 + ($1 ?? 0) } == 24)
        #expect(counted.last?.detail == "TypeError: boom (/app.js:3)")
        loop.cancel()
        await loop.value
    }

    @Test func withoutTheDevicesLeaveTheVersionStaysAndIsReported() async throws {
        let device = try await Self.device(errorRollback: false)
        let engine = try DeviceEngine.open(device.layout, options: .init(logger: .quiet))
        let clock = ManualClock()
        let problems = PageProblems(
            updater: engine.updater, clock: MonotonicClock(clock), allowRollback: engine.config.deviceSettings.errorRollback)
        for _ in 0..<4 {
            problems.acknowledged(version: "1.1.0")
            problems.pageErrors(1, messages: ["Error: always"], version: "1.1.0")
        }
        await clock.advance(by: .seconds(5 * 60))
        problems.tick()
        #expect(StateStore.load(device.layout).current == "1.1.0")
        #expect(Self.reports(device, .rolledBack).isEmpty)
        let report = Self.reports(device, .pageErrors).last
        #expect(report?.version == "1.1.0" && report?.count == 4 && report?.ms == 5 * 60_000)
    }

    @Test func aStoppedHostKeepsItsPeriodAndTheNextReportsTheVersionThatLeft() async throws {
        let device = try await Self.device(errorRollback: false)
        let engine = try DeviceEngine.open(device.layout, options: .init(logger: .quiet))
        let clock = ManualClock()
        let first = PageProblems(updater: engine.updater, clock: MonotonicClock(clock), allowRollback: false)
        first.acknowledged(version: "1.1.0")
        first.pageErrors(7, messages: ["RangeError: deep"], version: "1.1.0")
        first.webProcessDied(version: "1.1.0", reason: "crashed")
        await clock.advance(by: .seconds(120))
        first.stop()
        #expect(Self.reports(device, .pageErrors).isEmpty, "two minutes: nothing due, nothing sent")
        let file = device.layout.reports + "/page-errors.json"
        #expect(FileManager.default.fileExists(atPath: file))

        // The next host starts on another version: the kept period is 1.1.0's, reported now.
        let second = PageProblems(updater: engine.updater, clock: MonotonicClock(ManualClock()), allowRollback: false)
        second.served("1.0.0")
        let report = Self.reports(device, .pageErrors).last
        #expect(report?.version == "1.1.0" && report?.count == 8 && report?.ms == 120_000)
        #expect(report?.detail == "RangeError: deep | web process crashed")
        second.stop()
        #expect(!FileManager.default.fileExists(atPath: file), "nothing left to keep")
    }

    @Test func anAppKindIsCountedWithinItsRateAndABadOneIsRefused() async throws {
        let device = try await Self.device(errorRollback: false)
        let engine = try DeviceEngine.open(device.layout, options: .init(logger: .quiet))
        let clock = ManualClock()
        let problems = PageProblems(updater: engine.updater, clock: MonotonicClock(clock), allowRollback: false)
        problems.acknowledged(version: "1.1.0")
        for _ in 0..<1_000 { try problems.appProblem("checkout-failed", version: "1.1.0") }
        await clock.advance(by: .seconds(5))
        for _ in 0..<1_000 { try problems.appProblem("checkout-failed", version: "1.1.0") }
        #expect(throws: EngineError.self) { try problems.appProblem("bad kind!", version: "1.1.0") }
        problems.served("1.0.0")
        let report = Self.reports(device, .pageErrors).last
        #expect(report?.count == Int64(PageProblems.appBurst) + 5, "a burst of 10, then one a second")
        #expect(report?.detail == "app: checkout-failed")
    }

    /// A manual clock that counts the sleeps asked of it.
    final class CountingClock: Clock, Sendable {
        let manual = ManualClock()
        private let sleeps = Mutex(0)
        var count: Int { sleeps.withLock { $0 } }
        var now: ManualClock.Instant { manual.now }
        var minimumResolution: Duration { manual.minimumResolution }
        func sleep(until deadline: ManualClock.Instant, tolerance: Duration?) async throws {
            sleeps.withLock { $0 += 1 }
            try await manual.sleep(until: deadline, tolerance: tolerance)
        }
    }

    /// The agent's loop sleeps until the next period's end, wakes at an acknowledgement and
    /// at that end, and sleeps again: a wake by the clock must not leave it spinning.
    @Test func theLoopSleepsUntilEachPeriodEndsAndReportsIt() async throws {
        let device = try await Self.device(errorRollback: false)
        let engine = try DeviceEngine.open(device.layout, options: .init(logger: .quiet))
        let clock = CountingClock()
        let problems = PageProblems(updater: engine.updater, clock: MonotonicClock(clock), allowRollback: false)
        let loop = Task { await problems.run() }
        try await clock.manual.waitForSleeper()
        problems.acknowledged(version: "1.1.0")
        problems.pageErrors(2, messages: ["Error: x"], version: "1.1.0")
        try await clock.manual.waitForSleeps(2)  // the acknowledgement woke it: it sleeps until the period ends
        #expect(clock.count == 2 && clock.manual.sleeperCount == 1)
        await clock.manual.advance(by: .seconds(5 * 60))
        try await clock.manual.waitForSleeps(3)  // the woken loop reported and is back at its timer
        #expect(!Self.reports(device, .pageErrors).isEmpty, "the first period reported by the loop")
        let settled = clock.count
        #expect(settled <= 4, "one sleep per wake: \(settled)")
        #expect(Self.reports(device, .pageErrors).first?.count == 2)
        loop.cancel()
        await loop.value
        #expect(clock.count == settled, "no sleep after the clock's wake but the one waited for")
    }

    @Test func withoutAReportURLNothingIsCountedOrKept() async throws {
        let device = try DeviceFixture()
        try await device.installAndCommit(["1.0.0"])
        let engine = try DeviceEngine.open(device.layout, options: .init(logger: .quiet))
        let problems = PageProblems(updater: engine.updater, clock: MonotonicClock(ManualClock()), allowRollback: false)
        problems.acknowledged(version: "1.0.0")
        problems.pageErrors(3, messages: ["x"], version: "1.0.0")
        problems.stop()
        #expect(!FileManager.default.fileExists(atPath: device.layout.reports))
    }
}

import ClientFoundation
import FleetReports
import Foundation
import RolloutGuard
import Synchronization
import TestSupport
import Testing

/// `rollout guard --every` as a library: passes on an injected clock, a stop that ends the
/// wait between passes at once, a pass that fails for a while reported and the next one
/// tried. No real time passes: the clock is a test's.
@Suite struct GuardLoopTests {
    /// The code of a failure that lasts a while (the collector answering 503).
    struct Unavailable: ClientctlErrorCode {
        var description: String { "unavailable" }
        func kind(underlying: (any Error & Sendable)?) -> FailureKind { .unavailable }
    }

    /// A fleet that answers each pass from a script, then the last answer again.
    final class ScriptedFleet: GuardFleet {
        let script: [Result<GuardFigures, any Error>]
        let calls = Mutex(0)
        init(_ script: [Result<GuardFigures, any Error>]) { self.script = script }
        func figures(_ query: GuardQuery) async throws -> GuardFigures {
            let call = calls.withLock { calls in
                defer { calls += 1 }
                return calls
            }
            return try script[min(call, script.count - 1)].get()
        }
    }

    /// What the loop reported.
    final class Reports: Sendable {
        let outcomes = Mutex<[String]>([])
        let failures = Mutex<[String]>([])
    }

    static func pass(_ tmp: TemporaryDirectory, fleet: any GuardFleet) throws -> RolloutGuardPass {
        let folder = try ReleaseFolder(path: tmp("releases"), key: try ReleaseFolder.testKey())
        try folder.publish("1.0.0", archive: Data("a".utf8))
        return RolloutGuardPass(
            releases: tmp("releases"), channel: "stable", fleet: fleet, signers: [],
            options: .init(maxFailureRate: 0.1, minDevices: 20, baseline: false))
    }

    static let holding = RolloutGuardPassTests.figures("1.0.0", failed: 0, trials: 3)

    @Test func passesFollowTheClockAndAFailureThatLastsAWhileIsReportedAndTheNextPassTried() async throws {
        let tmp = try TemporaryDirectory("guard-loop")
        let fleet = ScriptedFleet([.failure(ModuleError(Unavailable(), "collector: HTTP 503")), .success(Self.holding)])
        let pass = try Self.pass(tmp, fleet: fleet)
        let (clock, stop, reports) = (ManualClock(), GuardStop(), Reports())
        let loop = Task {
            try await pass.repeating(
                every: .seconds(900), clock: clock, until: stop, passed: { outcome in reports.outcomes.withLock { $0.append(outcome.line) } },
                failed: { error in reports.failures.withLock { $0.append(error.message) } })
        }
        try await clock.waitForSleeper()
        #expect(fleet.calls.withLock { $0 } == 1)
        #expect(reports.failures.withLock { $0 } == ["collector: HTTP 503"], "reported, not thrown")
        await clock.advance(by: .seconds(899))
        #expect(clock.sleeperCount == 1 && fleet.calls.withLock { $0 } == 1, "the next pass waits for the whole interval")
        await clock.advance(by: .seconds(1))
        try await clock.waitForSleeper()
        #expect(fleet.calls.withLock { $0 } == 2)
        #expect(reports.outcomes.withLock { $0.count } == 1 && reports.outcomes.withLock { $0[0].contains(": holds: ") })
        stop.request()
        try await loop.value
        #expect(fleet.calls.withLock { $0 } == 2, "a stop ends the wait at once, with no further pass")
        #expect(stop.isRequested)
    }

    @Test func anyOtherFailureEndsTheLoop() async throws {
        let tmp = try TemporaryDirectory("guard-loop-fails")
        let fleet = ScriptedFleet([.failure(GuardError(.rejected, "not the guard's figures"))])
        let pass = try Self.pass(tmp, fleet: fleet)
        let error = await #expect(throws: GuardError.self) {
            try await pass.repeating(every: .seconds(60), clock: ManualClock(), until: GuardStop(), passed: { _ in }, failed: { _ in })
        }
        #expect(error?.code == .rejected && fleet.calls.withLock { $0 } == 1)
    }

    @Test func aStopRequestedBeforehandRunsNoPass() async throws {
        let tmp = try TemporaryDirectory("guard-loop-stopped")
        let fleet = ScriptedFleet([.success(Self.holding)])
        let pass = try Self.pass(tmp, fleet: fleet)
        let stop = GuardStop()
        stop.request()
        try await pass.repeating(every: .seconds(60), clock: ManualClock(), until: stop, passed: { _ in }, failed: { _ in })
        #expect(fleet.calls.withLock { $0 } == 0)
    }

    @Test func aCancelledLoopEndsWithoutWaiting() async throws {
        let tmp = try TemporaryDirectory("guard-loop-cancelled")
        let fleet = ScriptedFleet([.success(Self.holding)])
        let pass = try Self.pass(tmp, fleet: fleet)
        let clock = ManualClock()
        let loop = Task { try await pass.repeating(every: .seconds(60), clock: clock, until: GuardStop(), passed: { _ in }, failed: { _ in }) }
        try await clock.waitForSleeper()
        loop.cancel()
        try await loop.value
        #expect(fleet.calls.withLock { $0 } == 1)
    }
}

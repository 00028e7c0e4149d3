import ClientFoundation
import FleetReports
import Foundation
import RolloutGuard
import StrictJSON
import Synchronization
import TestSupport
import Testing

/// One pass of the guard as a library: the fleet and the clock injected, the release folder
/// real. What it asks the fleet, and that a pass that holds (or whose fleet fails) writes
/// nothing. (Halting, signing and pushing: `Tests/clientctlTests/RolloutGuardTests.swift`,
/// through the command that adapts this pass.)
@Suite struct RolloutGuardPassTests {
    /// A fleet that answers fixed figures and keeps what it was asked.
    final class FixedFleet: GuardFleet {
        let answer: Result<GuardFigures, GuardError>
        let asked = Mutex<[GuardQuery]>([])
        init(_ answer: Result<GuardFigures, GuardError>) { self.answer = answer }
        func figures(_ query: GuardQuery) async throws -> GuardFigures {
            asked.withLock { $0.append(query) }
            return try answer.get()
        }
    }

    static func figures(_ version: String, failed: Int, trials: Int) -> GuardFigures {
        GuardFigures(
            app: "com.example.notes", channel: "stable", admission: "manual", trust: "admitted", trustedBefore: nil, since: nil,
            versions: [VersionFigures(version: version, trials: trials, failed: failed)], reported: [], untrustedDevices: 0)
    }

    @Test func aPassAsksForTheVersionAndItsBaselineInItsWindowAndHoldsOnFewDevices() async throws {
        let tmp = try TemporaryDirectory("guard-pass")
        let folder = try ReleaseFolder(path: tmp("releases"), key: try ReleaseFolder.testKey())
        let start = Date(timeIntervalSince1970: 1_790_000_000)
        try folder.publish("1.0.0", archive: Data("a".utf8))
        try folder.publish("1.1.0", archive: Data("b".utf8)) {
            $0["rollout"] = .object([
                "start": .string(RFC3339.format(start)),
                "steps": .array([.array([.integer(0), .integer(10)]), .array([.integer(86400), .integer(100)])]),
            ])
        }
        let before = try TreeSnapshot(tmp("releases"))
        let fleet = FixedFleet(.success(Self.figures("1.1.0", failed: 3, trials: 5)))
        let pass = RolloutGuardPass(
            releases: tmp("releases"), channel: "stable", fleet: fleet, signers: [],
            options: .init(maxFailureRate: 0.1, minDevices: 20, baseline: true), now: { start.addingTimeInterval(3600) })
        let outcome = try await pass.run()

        #expect(outcome.action == .hold && !outcome.halted, "\(outcome.line)")
        #expect(outcome.decision.verdict != .halt && outcome.decision.trials == 5, "\(outcome.line)")
        #expect(outcome.line.hasPrefix("com.example.notes 1.1.0 on stable: holds: "), "\(outcome.line)")
        let query = try #require(fleet.asked.withLock { $0.first })
        #expect(query.app == "com.example.notes" && query.channel == "stable")
        #expect(query.versions == ["1.1.0", "1.0.0"], "the version, then the baseline")
        #expect(query.trustedBefore <= start, "no later than the rollout's start")
        #expect(query.since == nil && query.labels.isEmpty, "every device")
        #expect(try TreeSnapshot(tmp("releases")) == before, "a pass that holds writes nothing")
    }

    /// `--label`: the fleet is asked for that cohort's figures only, and the line names it.
    @Test func aPassForACohortAsksForItsFiguresOnly() async throws {
        let tmp = try TemporaryDirectory("guard-pass-cohort")
        let folder = try ReleaseFolder(path: tmp("releases"), key: try ReleaseFolder.testKey())
        try folder.publish("1.0.0", archive: Data("a".utf8))
        let fleet = FixedFleet(.success(Self.figures("1.0.0", failed: 1, trials: 30)))
        let cohort = try LabelFilter(["store=12", "ring=beta"])
        let pass = RolloutGuardPass(
            releases: tmp("releases"), channel: "stable", fleet: fleet, signers: [],
            options: .init(maxFailureRate: 0.1, minDevices: 20, baseline: false), cohort: cohort)
        let outcome = try await pass.run()
        #expect(outcome.action == .hold && outcome.cohort == cohort)
        #expect(outcome.line.hasPrefix("com.example.notes 1.0.0 on stable (devices labelled ring=beta,store=12): holds: 1 of 30"), "\(outcome.line)")
        #expect(fleet.asked.withLock { $0.map(\.labels) } == [cohort])
        let json = try #require(try JSONSerialization.jsonObject(with: outcome.jsonLine()) as? [String: Any])
        #expect(json["labels"] as? [String: String] == ["ring": "beta", "store": "12"])
    }

    @Test func aFleetThatFailsLeavesTheFolderAsItWas() async throws {
        let tmp = try TemporaryDirectory("guard-pass-fails")
        let folder = try ReleaseFolder(path: tmp("releases"), key: try ReleaseFolder.testKey())
        try folder.publish("1.0.0", archive: Data("a".utf8))
        let before = try TreeSnapshot(tmp("releases"))
        let fleet = FixedFleet(.failure(GuardError(.rejected, "not the guard's figures")))
        let pass = RolloutGuardPass(
            releases: tmp("releases"), channel: "stable", fleet: fleet, signers: [],
            options: .init(maxFailureRate: 0.1, minDevices: 1, baseline: false))
        await #expect(throws: GuardError.self) { try await pass.run() }
        #expect(try TreeSnapshot(tmp("releases")) == before)
    }

    @Test func aChannelWithoutAManifestIsNamed() async throws {
        let tmp = try TemporaryDirectory("guard-pass-empty")
        try FileManager.default.createDirectory(atPath: tmp("releases/stable"), withIntermediateDirectories: true)
        let pass = RolloutGuardPass(
            releases: tmp("releases"), channel: "stable", fleet: FixedFleet(.success(Self.figures("1.0.0", failed: 0, trials: 0))),
            signers: [], options: .init(maxFailureRate: 0.1, minDevices: 1, baseline: false))
        let error = await #expect(throws: GuardError.self) { try await pass.run() }
        #expect(error?.code == .notFound && error?.message.contains("publish a release on channel stable") == true)
        #expect(error?.kind.exitStatus == 66)
    }
}

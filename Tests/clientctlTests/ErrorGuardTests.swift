import ClientFoundation
import Foundation
import SignedManifest
import StrictJSON
import TestSupport
import Testing

/// `clientctl rollout guard --max-error-increase` against a real `clientctl collect` on
/// 127.0.0.1 fed `page-errors` reports whose truth the test knows
/// (docs/page-errors.md#the-guard): a release that throws after start is halted though no
/// device rolled it back; without the flag, or with devices the collector does not trust,
/// it is not.
@Suite struct ErrorGuardTests {
    /// Devices `range` committed `version` and used it an hour; the first `erroring` of them
    /// with `errors` problems in that hour.
    static func use(_ version: String, devices range: Range<Int>, erroring: Int, errors: Int) -> [Data] {
        range.enumerated().map { i, n in
            let count = i < erroring ? ",\"count\":\(errors)" : ""
            return RolloutGuardTests.batch(
                device: n,
                [
                    ("trial-started", version, ",\"version\":\"\(version)\""),
                    ("committed", version, ",\"version\":\"\(version)\",\"ms\":700"),
                    ("page-errors", version, ",\"version\":\"\(version)\"\(count),\"ms\":3600000,\"detail\":\"TypeError: x (/app.js:1)\""),
                ])
        }
    }

    /// 1.0.0: 3 of 60 devices had one error in their hour; 1.1.0: 15 of 40 had 6.
    static func fleet() -> [Data] {
        use("1.0.0", devices: 1..<61, erroring: 3, errors: 1) + use("1.1.0", devices: 61..<101, erroring: 15, errors: 6)
    }

    @Test func aReleaseThatThrowsAfterStartIsHaltedThoughNoDeviceRolledItBack() async throws {
        let rig = try await RestrictionRig()
        try await rig.d.installAndCommit(["1.0.0"])
        try rig.d.publish("1.1.0")
        let dir = try TemporaryDirectory("error-guard")
        let collector = try await RolloutGuardTests.collector(dir, Self.fleet())
        defer { _ = collector.stop() }

        // Off by default: rollbacks alone are judged, and none happened.
        let off = try await RolloutGuardTests.guardRun(rig, collector)
        #expect(off.status == 0, "\(off.output)\(off.errorOutput)")
        #expect(!off.output.contains("errors:"), "\(off.output)")
        #expect(!FileManager.default.fileExists(atPath: RolloutGuardTests.restrictionPath(rig)))

        let run = try await RolloutGuardTests.guardRun(rig, collector, ["--max-error-increase", "2", "--json"])
        #expect(run.status == 3, "\(run.output)\(run.errorOutput)")
        let object = try #require(try JSONSerialization.jsonObject(with: run.stdout) as? [String: Any])
        #expect(object["verdict"] as? String == "halt" && object["failed"] as? Int == 0 && object["trials"] as? Int == 40)
        let errors = try #require(object["errors"] as? [String: Any])
        #expect(errors["verdict"] as? String == "halt" && errors["rule"] as? String == "max-error-increase")
        #expect(errors["previous"] as? String == "1.0.0")
        let figures = try #require(errors["figures"] as? [String: Any])
        #expect(figures["devices"] as? Int == 40 && figures["errors"] as? Int == 90)
        let restriction = try RolloutGuardTests.restriction(rig)
        #expect(restriction.paused && restriction.version == Version(1, 1, 0))
    }

    @Test func theSameErrorsAsTheReleaseBeforeHold() async throws {
        let rig = try await RestrictionRig()
        try await rig.d.installAndCommit(["1.0.0"])
        try rig.d.publish("1.1.0")
        let dir = try TemporaryDirectory("error-guard-same")
        let collector = try await RolloutGuardTests.collector(
            dir, Self.use("1.0.0", devices: 1..<61, erroring: 6, errors: 2) + Self.use("1.1.0", devices: 61..<101, erroring: 4, errors: 2))
        defer { _ = collector.stop() }
        let run = try await RolloutGuardTests.guardRun(rig, collector, ["--max-error-increase", "2"])
        #expect(run.status == 0, "\(run.output)\(run.errorOutput)")
        #expect(run.output.contains("errors: 0.2/device-hour on 40 devices"), "\(run.output)")
        #expect(run.output.contains("max-error-increase: lower bound not above"), "\(run.output)")
    }

    @Test func devicesTheCollectorDoesNotTrustCountForNothing() async throws {
        let rig = try await RestrictionRig()
        try await rig.d.installAndCommit(["1.0.0"])
        try rig.d.publish("1.1.0")
        let dir = try TemporaryDirectory("error-guard-untrusted")
        let collector = try await RolloutGuardTests.collector(dir, Self.fleet())
        defer { _ = collector.stop() }
        // Under open admission only devices heard from before the rollout count: these
        // 100 were all first heard just now, as ids invented after a release would be.
        let before = RFC3339.format(Date(timeIntervalSince1970: (Date().timeIntervalSince1970 - 3600).rounded(.down)))
        var arguments = RolloutGuardTests.arguments(rig, collector)
        if let i = arguments.firstIndex(of: "--history-before") { arguments[i + 1] = before }
        let run = try await ClientctlBinary.run(arguments + ["--max-error-increase", "2"])
        #expect(run.status == 0, "\(run.output)\(run.errorOutput)")
        #expect(run.output.contains("errors: none reported"), "\(run.output)")
        #expect(!FileManager.default.fileExists(atPath: RolloutGuardTests.restrictionPath(rig)))
    }

    @Test func aRatioBelowOneIsRefused() async throws {
        let run = try await ClientctlBinary.run([
            "rollout", "guard", "stable", "--out", "/nonexistent", "--key", "/nonexistent.pem", "--collector", "http://127.0.0.1:9/",
            "--token-file", "/nonexistent", "--max-error-increase", "0.5",
        ])
        #expect(run.status == 64, "\(run.errorOutput)")
        #expect(run.errorOutput.contains("--max-error-increase must be a factor from 1 to 1000"), "\(run.errorOutput)")
    }
}

import ClientFoundation
import FleetReports
import Foundation
import RolloutGuard
import Testing

/// `RolloutGuardRule`: when the fleet's figures halt a rollout, without a collector.
@Suite struct RolloutGuardRuleTests {
    static let v110 = Version(1, 1, 0)
    static let published: Set<Version> = [Version(1, 0, 0), v110]

    /// A summary where each `(version, failed, trials)` has that many distinct devices.
    static func summary(_ figures: [(String, Int, Int)]) -> FleetSummary {
        var s = FleetSummary(
            app: "com.example.notes", channel: "stable", generated: Date(timeIntervalSince1970: 1_764_090_000), windowSeconds: 86_400)
        s.versions = figures.map { version, failed, trials in
            var v = VersionSummary(version: version)
            v.trials = trials
            if failed > 0 { v.rollbacks = ["timed-out": failed] }
            if trials > 0 { v.failureRate = Double(failed) / Double(trials) }
            return v
        }
        return s
    }

    static func decide(_ figures: [(String, Int, Int)], _ options: RolloutGuardRule.Options = .init()) -> RolloutGuardRule.Decision {
        RolloutGuardRule.decide(summary: summary(figures), version: v110, published: published, options: options)
    }

    @Test func theWilsonBoundsOfKnownCases() throws {
        let b = try #require(RolloutGuardRule.wilson(failed: 12, trials: 40))
        #expect(abs(b.lower - 0.1807) < 0.0005 && abs(b.upper - 0.4546) < 0.0005, "\(b)")
        let one = try #require(RolloutGuardRule.wilson(failed: 1, trials: 1))
        #expect(abs(one.lower - 0.2065) < 0.0005 && one.upper == 1)
        let none = try #require(RolloutGuardRule.wilson(failed: 0, trials: 1000))
        #expect(none.lower == 0 && none.upper < 0.004)
        #expect(RolloutGuardRule.wilson(failed: 0, trials: 0) == nil)
    }

    /// One device that fails is 100 % of the trials, but never enough to halt.
    @Test func oneFailingDeviceOfOneNeverHalts() {
        let d = Self.decide([("1.1.0", 1, 1)])
        #expect(d.verdict == .hold && d.rule == .minDevices && d.failed == 1 && d.trials == 1 && d.rate == 1)
        #expect(
            d.summary.hasPrefix("1.1.0: 1 of 1 device rolled it back (100 %; lower bound 20.7 %); min-devices: fewer than 20 trials"), "\(d.summary)")
        // Nor 19 of 19: min-devices holds whatever the rate.
        #expect(Self.decide([("1.1.0", 19, 19)]).verdict == .hold)
    }

    /// 30 % of 40 devices: the lower bound (≈ 0.18) is above 0.1.
    @Test func thirtyPercentOfFortyHalts() throws {
        let d = Self.decide([("1.1.0", 12, 40)])
        #expect(d.verdict == .halt && d.rule == .maxFailureRate && d.failed == 12 && d.trials == 40 && d.limit == 0.1)
        #expect(abs(try #require(d.lowerBound) - 0.18) < 0.005)
        #expect(
            d.summary
                == "1.1.0: 12 of 40 devices rolled it back (30 %; lower bound 18.1 %); max-failure-rate: lower bound above 10 %; 0 unpublished versions ignored"
        )
    }

    /// A 1 % background rate over 1,000 devices (and a 5 % one) never halts at 10 %.
    @Test(arguments: [10, 50]) func aBackgroundRateOverAThousandDevicesNeverHalts(failed: Int) {
        let d = Self.decide([("1.1.0", failed, 1000)])
        #expect(d.verdict == .hold && d.rule == .maxFailureRate, "\(d.summary)")
    }

    /// The lower bound, not the rate: 3 of 20 (15 %) is above 10 % but not clearly so.
    @Test func aRateJustAboveTheLimitOnFewDevicesHolds() {
        let d = Self.decide([("1.1.0", 3, 20)])
        #expect(d.verdict == .hold && d.rule == .maxFailureRate && d.rate == 0.15)
    }

    @Test func theOptionsMoveTheThresholds() {
        #expect(Self.decide([("1.1.0", 12, 40)], .init(minDevices: 41)).verdict == .hold)
        #expect(Self.decide([("1.1.0", 12, 40)], .init(maxFailureRate: 0.2)).verdict == .hold)
        #expect(Self.decide([("1.1.0", 2, 10)], .init(minDevices: 5)).verdict == .hold)
        #expect(Self.decide([("1.1.0", 8, 10)], .init(minDevices: 5)).verdict == .halt)
    }

    /// With a baseline the previous version's upper bound is added to the limit; without
    /// enough trials of it the rule falls back to the limit alone and says so.
    @Test func theBaselineRaisesTheLimitByThePreviousVersionsUpperBound() throws {
        let options = RolloutGuardRule.Options(baseline: true)
        // 1.0.0 rolls back on 20 % of 500 devices: 30 % of 40 is no worse than that.
        let flaky = Self.decide([("1.1.0", 12, 40), ("1.0.0", 100, 500)], options)
        #expect(flaky.verdict == .hold && flaky.rule == .baseline)
        let upper = try #require(RolloutGuardRule.wilson(failed: 100, trials: 500)?.upper)
        #expect(flaky.limit == 0.1 + upper && flaky.baseline?.version == "1.0.0" && flaky.baseline?.used == true)
        #expect(flaky.summary.contains("(baseline 1.0.0: 100 of 500, upper bound 23.7 %)"), "\(flaky.summary)")
        // A healthy 1.0.0: 30 % of 40 still halts.
        #expect(Self.decide([("1.1.0", 12, 40), ("1.0.0", 2, 500)], options).verdict == .halt)
        // 1.0.0 with 5 trials: max-failure-rate alone.
        let few = Self.decide([("1.1.0", 12, 40), ("1.0.0", 5, 5)], options)
        #expect(few.verdict == .halt && few.rule == .maxFailureRate && few.limit == 0.1 && few.baseline?.used == false)
        #expect(few.summary.contains("(baseline 1.0.0 has 5 trials, fewer than 20: max-failure-rate alone)"), "\(few.summary)")
        // No version below 1.1.0 was published.
        let first = RolloutGuardRule.decide(
            summary: Self.summary([("1.1.0", 12, 40)]), version: Self.v110, published: [Self.v110], options: options)
        #expect(first.verdict == .halt && first.baseline?.version == nil)
        #expect(first.summary.contains("no earlier published version for a baseline"))
    }

    /// Versions the channel never published are counted and ignored, also as a baseline:
    /// 1.0.5 sits between 1.0.0 and 1.1.0 in the reports, but the folder never had it.
    @Test func unpublishedVersionsAreIgnoredAndCounted() {
        let d = Self.decide(
            [("1.1.0", 12, 40), ("1.0.5", 0, 900), ("9.9.9", 500, 500), ("1.0.0", 100, 500), ("embedded-2.0.0", 0, 0)],
            .init(baseline: true))
        #expect(d.ignored == ["1.0.5", "9.9.9"] && d.baseline?.version == "1.0.0" && d.verdict == .hold)
        #expect(d.summary.hasSuffix("; 2 unpublished versions ignored"))
    }

    /// The distinct rollback count comes back from the rate exactly, and a rollback without
    /// a reported trial still counts as a trial.
    @Test func countsComeBackFromTheSummary() {
        var v = VersionSummary(version: "1.1.0")
        v.trials = 3
        v.failureRate = 1.0 / 3.0
        #expect(RolloutGuardRule.counts(of: v) == (1, 3))
        var lost = VersionSummary(version: "1.1.0")
        lost.rollbacks = ["timed-out": 2, "page-crashed": 1]
        #expect(RolloutGuardRule.counts(of: lost) == (2, 2))
        #expect(RolloutGuardRule.counts(of: nil) == (0, 0))
        // No report of the version at all: nothing to halt.
        let d = RolloutGuardRule.decide(summary: Self.summary([]), version: Self.v110, published: Self.published)
        #expect(d.verdict == .hold && d.rule == .minDevices && d.rate == nil && d.lowerBound == nil)
        #expect(d.summary.hasPrefix("1.1.0: 0 of 0 devices rolled it back; min-devices"))
    }
}

import ClientFoundation
import FleetReports
import Foundation
import Testing

@testable import RolloutGuard

/// The guard's judgement of errors after start (`--max-error-increase`,
/// docs/page-errors.md#the-guard): the release's mean errors per device-hour against the
/// previous published version's, both with bounds and a minimum of devices, every device
/// weighing the same.
@Suite struct ErrorGuardRuleTests {
    static let hour: Int64 = 3_600_000
    static let old = Version(1, 0, 0)
    static let new = Version(1, 1, 0)

    /// `n` devices with `hours` of use each, `erroring` of them with `errors` problems.
    static func figures(devices n: Int, hours: Int64 = 1, erroring: Int, errors: Int64) -> ErrorFigures {
        var sums: [(errors: Int64, ms: Int64)] = []
        for i in 0..<n { sums.append((errors: i < erroring ? errors : 0, ms: hours * hour)) }
        return ErrorFigures(devices: sums)
    }

    static func guardFigures(new: ErrorFigures?, old: ErrorFigures?) -> GuardFigures {
        GuardFigures(
            app: "notes", channel: "stable", admission: "open", trust: GuardFigures.admittedOrHistory, trustedBefore: nil, since: nil,
            versions: [
                VersionFigures(version: "1.1.0", trials: 50, failed: 0, errors: new),
                VersionFigures(version: "1.0.0", trials: 1000, failed: 0, errors: old),
            ], reported: [], untrustedDevices: 0)
    }

    static func decide(new: ErrorFigures?, old: ErrorFigures?, ratio: Double? = 2) -> RolloutGuardRule.Decision {
        RolloutGuardRule.decide(
            figures: guardFigures(new: new, old: old), version: Self.new, published: [Self.old, Self.new],
            options: RolloutGuardRule.Options(maxFailureRate: 0.1, minDevices: 20, maxErrorIncrease: ratio))
    }

    @Test func aReleaseThrowingOnAThirdOfLoadsIsHaltedThoughNoDeviceRolledBack() {
        // 50 devices an hour in: 15 throw on 3 loads of 10; the previous release: 2 in 100 devices, once.
        let decision = Self.decide(new: Self.figures(devices: 50, erroring: 15, errors: 3), old: Self.figures(devices: 1000, erroring: 20, errors: 1))
        #expect(decision.verdict == .halt)
        #expect(decision.errors?.verdict == .halt && decision.errors?.rule == "max-error-increase")
        #expect(decision.failed == 0, "no rollback: the errors alone halted it")
        #expect(decision.summary.contains("errors: 0.9/device-hour on 50 devices"))
        #expect(decision.summary.contains("max-error-increase: lower bound above 2 ×"))
        #expect(decision.summary.contains("0 of 50 devices rolled it back"))
        #expect(!decision.summary.contains("max-failure-rate: lower bound above"), "the rollbacks' part says they hold")
    }

    @Test func theSameErrorRateAsBeforeHolds() {
        let decision = Self.decide(new: Self.figures(devices: 50, erroring: 5, errors: 2), old: Self.figures(devices: 1000, erroring: 100, errors: 2))
        #expect(decision.verdict == .hold && decision.errors?.verdict == .hold)
        #expect(decision.errors?.rule == "max-error-increase")
    }

    @Test func withoutTheFlagErrorsAreNotJudged() {
        let decision = Self.decide(
            new: Self.figures(devices: 50, erroring: 50, errors: 60), old: Self.figures(devices: 1000, erroring: 0, errors: 0), ratio: nil)
        #expect(decision.verdict == .hold && decision.errors == nil)
    }

    @Test func tooFewDevicesWithUseOnEitherVersionHaltNothing() {
        let few = Self.decide(new: Self.figures(devices: 19, erroring: 19, errors: 60), old: Self.figures(devices: 1000, erroring: 0, errors: 0))
        #expect(few.verdict == .hold && few.errors?.rule == "min-devices")
        let fewBefore = Self.decide(new: Self.figures(devices: 50, erroring: 50, errors: 60), old: Self.figures(devices: 5, erroring: 0, errors: 0))
        #expect(fewBefore.verdict == .hold && fewBefore.errors?.rule == "min-devices")
        // Less than 5 minutes of use is not a device yet: 100 devices with 4 minutes each.
        var sums: [(errors: Int64, ms: Int64)] = []
        for _ in 0..<100 { sums.append((errors: 10, ms: 4 * 60_000)) }
        let fresh = Self.decide(new: ErrorFigures(devices: sums), old: Self.figures(devices: 1000, erroring: 0, errors: 0))
        #expect(fresh.verdict == .hold && fresh.errors?.figures?.devices == 0)
        let none = Self.decide(new: nil, old: nil)
        #expect(none.verdict == .hold && none.summary.contains("errors: none reported"))
    }

    @Test func oneStolenKeyOrOneBrokenDeviceCountsForOneDevice() {
        // 49 quiet devices and one that claims 10^9 errors in its hour: capped at 60, and its
        // spread widens the bound: no halt against a quiet previous release.
        var sums: [(errors: Int64, ms: Int64)] = (0..<49).map { _ in (errors: 0, ms: Self.hour) }
        sums.append((errors: 1_000_000_000, ms: Self.hour))
        let stolen = ErrorFigures(devices: sums)
        #expect(stolen.mean == 60.0 / 50)
        #expect((stolen.errorsPerDeviceHour ?? 0) > 1_000_000, "the plain ratio shows what was claimed")
        let decision = Self.decide(new: stolen, old: Self.figures(devices: 1000, erroring: 20, errors: 1))
        #expect(decision.verdict == .hold)
        #expect((decision.errors?.lowerBound ?? 1) == 0)
    }

    @Test func aPreviousReleaseWithNoErrorsStillBoundsItsRateAboveZero() {
        // 1,000 quiet device-hours: the upper bound is 3 per 1,000 hours, not 0, so one
        // device's single error among 50 does not halt.
        let old = Self.figures(devices: 1000, erroring: 0, errors: 0)
        #expect(old.bounds()?.upper == 3.0 / 1000)
        let decision = Self.decide(new: Self.figures(devices: 50, erroring: 1, errors: 1), old: old)
        #expect(decision.verdict == .hold)
    }

    @Test func rollbacksStillHaltOnTheirOwn() {
        var figures = Self.guardFigures(
            new: Self.figures(devices: 50, erroring: 0, errors: 0), old: Self.figures(devices: 1000, erroring: 0, errors: 0))
        figures.versions[0].failed = 40
        let decision = RolloutGuardRule.decide(
            figures: figures, version: Self.new, published: [Self.old, Self.new],
            options: RolloutGuardRule.Options(maxFailureRate: 0.1, minDevices: 20, maxErrorIncrease: 2))
        #expect(decision.verdict == .halt && decision.errors?.verdict == .hold)
        #expect(decision.summary.contains("max-failure-rate: lower bound above"))
    }

    @Test func theFirstReleaseHasNothingToCompareWith() {
        let decision = RolloutGuardRule.decide(
            figures: Self.guardFigures(new: Self.figures(devices: 50, erroring: 50, errors: 60), old: nil), version: Self.new,
            published: [Self.new], options: RolloutGuardRule.Options(minDevices: 20, maxErrorIncrease: 2))
        #expect(decision.verdict == .hold)
        #expect(decision.summary.contains("no earlier published version to compare with"))
    }
}

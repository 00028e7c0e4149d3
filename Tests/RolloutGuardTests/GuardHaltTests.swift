import ApplyPolicy
import ArchivePublishing
import ClientFoundation
import DeviceIdentity
import DeviceTargeting
import FleetReports
import Foundation
import RolloutGuard
import Testing

/// `GuardHalt`: what a halt signs, from the restriction in force, the cohort and the clock,
/// without a folder or a key (docs/fleet-reports.md#the-rollout-guard). Each row is one
/// plan; the composition rows feed a plan's target back as the next one's restriction in
/// force, as the channel folder does between two passes.
@Suite struct GuardHaltTests {
    static let release = Version(1, 1, 0)
    static let now = Date(timeIntervalSince1970: 1_790_000_000)
    /// A restriction in force for a week more.
    static let week = now.addingTimeInterval(7 * 86_400)

    static func target(_ text: String) throws -> TargetExpression { try TargetExpression(parsing: text) }

    static func cohort(_ labels: String...) throws -> LabelFilter { try LabelFilter(labels) }

    static func plan(
        _ inForce: GuardHalt.InForce?, cohort: LabelFilter = LabelFilter(), revoke: Bool = false, releaseExpires: Date? = nil
    ) throws -> GuardHalt.Plan {
        try GuardHalt.plan(release: release, releaseExpires: releaseExpires, inForce: inForce, cohort: cohort, revoke: revoke, now: now)
    }

    /// The request of a plan that signs.
    static func request(_ plan: GuardHalt.Plan, sourceLocation: SourceLocation = #_sourceLocation) throws -> RestrictionRequest {
        guard case .sign(let request) = plan else {
            Issue.record("expected a restriction to sign, got \(plan)", sourceLocation: sourceLocation)
            throw CancellationError()
        }
        return request
    }

    /// The restriction in force after signing `request`: what the next pass reads back.
    static func signed(_ request: RestrictionRequest, expires: Date = week) -> GuardHalt.InForce {
        var inForce = GuardHalt.InForce(
            paused: request.pause, percent: request.percent, revoked: request.revoke, target: request.target, expires: expires)
        inForce.apply = request.apply
        return inForce
    }

    // MARK: - The whole release (no --label)

    @Test func withoutACohortAHaltPausesTheRelease() throws {
        let r = try Self.request(try Self.plan(nil))
        #expect(r.pause && r.percent == nil && r.revoke.isEmpty && r.target == nil && r.apply == nil)
        #expect(r.release == Self.release, "it signs only while the release judged is the channel's")
        let revoking = try Self.request(try Self.plan(nil, revoke: true))
        #expect(revoking.pause && revoking.revoke == [Self.release])
    }

    /// A person's cap, revocations, apply policy and narrowing stay in the pause.
    @Test func aPauseKeepsEveryFieldOfTheRestrictionInForce() throws {
        var inForce = GuardHalt.InForce(percent: 5, revoked: [Version(1, 0, 1)], target: try Self.target("not site = lobby"), expires: Self.week)
        inForce.apply = try ApplyPolicy(mode: .window)
        let r = try Self.request(try Self.plan(inForce))
        #expect(r.pause && r.percent == 5 && r.revoke == [Version(1, 0, 1)])
        #expect(r.target?.description == "not site = lobby" && r.apply == inForce.apply)
        let revoking = try Self.request(try Self.plan(inForce, revoke: true))
        #expect(revoking.revoke == [Version(1, 0, 1), Self.release])
    }

    @Test func aPausedReleaseIsAlreadyHaltedUntilLessThanADayIsLeft() throws {
        let paused = GuardHalt.InForce(paused: true, percent: 20, expires: Self.week)
        #expect(try Self.plan(paused) == .alreadyHalted)
        #expect(try Self.plan(paused, revoke: true) != .alreadyHalted, "--revoke adds the revocation")
        #expect(try Self.plan(GuardHalt.InForce(paused: true, revoked: [Self.release], expires: Self.week), revoke: true) == .alreadyHalted)

        let ending = GuardHalt.InForce(paused: true, percent: 20, expires: Self.now.addingTimeInterval(3_600))
        let renewed = try Self.request(try Self.plan(ending))
        #expect(renewed.pause && renewed.percent == 20, "renewed with what it held")
        #expect(
            try Self.plan(ending, releaseExpires: Self.now.addingTimeInterval(3_600)) == .alreadyHalted,
            "a restriction never outlives its manifest: one that reaches the manifest's expiry is not renewed")
    }

    // MARK: - One cohort (--label)

    @Test func aHaltForACohortNarrowsTheReleaseAwayFromItAlone() throws {
        let one = try Self.request(try Self.plan(nil, cohort: try Self.cohort("store=12")))
        #expect(!one.pause && one.revoke.isEmpty && one.percent == nil)
        #expect(one.target?.description == "not store = 12")

        let two = try Self.request(try Self.plan(nil, cohort: try Self.cohort("store=12", "ring=beta")))
        #expect(two.target?.description == "not (ring = beta and store = 12)", "keys in order, one group of devices")
        let device = { (labels: [String: String]) in TargetDevice(id: nil, labels: try DeviceLabels(labels)) }
        let target = try #require(two.target)
        #expect(!target.admits(try device(["store": "12", "ring": "beta", "site": "lobby"])))
        let others = [try device(["store": "12"]), try device(["ring": "beta"]), try device([:])]
        #expect(others.allSatisfy { target.admits($0) }, "a device with only some of the labels keeps taking it")
    }

    /// The restriction in force narrows further; its other fields stay as they were.
    @Test func aCohortHaltKeepsEveryFieldOfTheRestrictionInForce() throws {
        var inForce = GuardHalt.InForce(percent: 50, revoked: [Version(1, 0, 1)], target: try Self.target("store in (7, 12, 14)"), expires: Self.week)
        inForce.apply = try ApplyPolicy(mode: .idle, idleSeconds: 300)
        let r = try Self.request(try Self.plan(inForce, cohort: try Self.cohort("store=12")))
        #expect(!r.pause && r.percent == 50 && r.revoke == [Version(1, 0, 1)] && r.apply == inForce.apply)
        #expect(r.target?.description == "store in (7, 12, 14) and not store = 12")

        let either = GuardHalt.InForce(target: try Self.target("ring = beta or store = 7"), expires: Self.week)
        let parenthesized = try Self.request(try Self.plan(either, cohort: try Self.cohort("store=7")))
        #expect(parenthesized.target?.description == "(ring = beta or store = 7) and not store = 7")
    }

    /// Two guards, one for store 12 and one for store 14, each reading what the other
    /// signed: the second narrows further, a guard whose cohort is left out already signs
    /// nothing, and no pass ever widens the target.
    @Test func twoCohortsComposeAndEachHaltIsIdempotent() throws {
        let twelve = try Self.cohort("store=12")
        let fourteen = try Self.cohort("store=14")
        let first = try Self.request(try Self.plan(nil, cohort: twelve))
        let afterFirst = Self.signed(first)
        #expect(try Self.plan(afterFirst, cohort: twelve) == .alreadyHalted, "the same cohort again: nothing signed")

        let second = try Self.request(try Self.plan(afterFirst, cohort: fourteen))
        #expect(second.target?.description == "not store = 12 and not store = 14" && !second.pause)
        let afterSecond = Self.signed(second)
        #expect(try Self.plan(afterSecond, cohort: twelve) == .alreadyHalted)
        #expect(try Self.plan(afterSecond, cohort: fourteen) == .alreadyHalted)
        #expect(
            try Self.plan(afterSecond, cohort: try Self.cohort("store=12", "ring=beta")) == .alreadyHalted,
            "a cohort inside one left out is left out")

        // A cohort that only overlaps one left out is narrowed on its own.
        let beta = try Self.request(try Self.plan(afterSecond, cohort: try Self.cohort("ring=beta")))
        #expect(beta.target?.description == "not store = 12 and not store = 14 and not ring = beta")
        // Renewing a cohort's halt adds no clause twice.
        let ending = Self.signed(second, expires: Self.now.addingTimeInterval(3_600))
        let renewed = try Self.request(try Self.plan(ending, cohort: twelve))
        #expect(renewed.target == second.target && !renewed.pause)
    }

    /// A paused release is halted for every cohort: a cohort's guard signs nothing, and
    /// when it renews the pause it keeps the target as it was.
    @Test func aPausedReleaseIsHaltedForEveryCohort() throws {
        let paused = GuardHalt.InForce(paused: true, target: try Self.target("store in (12, 14)"), expires: Self.week)
        #expect(try Self.plan(paused, cohort: try Self.cohort("store=12")) == .alreadyHalted)
        let ending = GuardHalt.InForce(paused: true, target: try Self.target("store in (12, 14)"), expires: Self.now.addingTimeInterval(60))
        let renewed = try Self.request(try Self.plan(ending, cohort: try Self.cohort("store=12")))
        #expect(renewed.pause && renewed.target?.description == "store in (12, 14)")
        let beta = try Self.cohort("ring=beta")
        #expect(GuardHalt.halts(paused, cohort: LabelFilter()) && GuardHalt.halts(paused, cohort: beta))
    }

    /// A target whose text is near 4,096 bytes cannot take one more exclusion: refused
    /// (65), nothing to sign, saying what to do instead.
    @Test func aNarrowedTargetOverTheBoundsIsRefused() throws {
        var values: [String] = []
        var text = "store in ()"
        while text.utf8.count < TargetExpression.maxBytes - 12 {
            values.append(String(format: "v%04d", values.count))
            text = "store in (\(values.joined(separator: ", ")))"
        }
        if text.utf8.count > TargetExpression.maxBytes { values.removeLast() }
        let large = GuardHalt.InForce(target: try Self.target("store in (\(values.joined(separator: ", ")))"), expires: Self.week)
        let error = #expect(throws: GuardError.self) { try Self.plan(large, cohort: try Self.cohort("store=v0001")) }
        #expect(error?.code == .tooLarge && error?.kind.exitStatus == 65)
        #expect(error?.message.contains("cannot also leave out the devices labelled 'store=v0001'") == true, "\(String(describing: error))")
        #expect(error?.message.contains("rollout guard without --label") == true)
        #expect(error?.message.contains("`") == false, "single quotes: the CLI strips backticks")
        #expect((error?.message.utf8.count ?? 0) < 600, "one readable line, not the 4 KB target: \(error?.message ?? "")")
        // The whole release can still be paused over it.
        #expect(try Self.request(try Self.plan(large)).pause)
        // A cohort its target leaves out already needs nothing.
        #expect(try Self.plan(large, cohort: try Self.cohort("store=12")) == .alreadyHalted)
    }

    // MARK: - Which devices a target leaves out, for sure

    @Test(arguments: [
        ("not store = 12", ["store": "12"], true),
        ("not store = 12", ["store": "14"], false),
        ("not store = 12", [:], false),
        ("store != 12", ["store": "12", "ring": "beta"], true),
        ("store not in (7, 12)", ["store": "12"], true),
        ("store in (7, 14)", ["store": "12"], true),
        ("store in (7, 12)", ["store": "12"], false),
        ("not (ring = beta and store = 12)", ["store": "12"], false),
        ("not (ring = beta and store = 12)", ["store": "12", "ring": "beta"], true),
        ("not store = 12 and not store = 14", ["store": "14"], true),
        ("ring = beta or store = 7", ["store": "12"], false),
        ("ring = beta or store = 7", ["store": "12", "ring": "stable"], true),
        ("id in cohort pilots and not store = 12", ["store": "12"], true),
        ("id in cohort pilots or store = 7", ["store": "12"], false),
        ("id in (0f1e2d3c4b5a69788796a5b4c3d2e1f0)", ["store": "12"], false),
        ("not (store = 12 or ring = beta)", ["store": "12"], true),
        ("site = lobby and store = 1 and store = 2", [:], false),
    ])
    func admitsNoneIsTrueOnlyWhenNoDeviceWithTheLabelsCanBeAdmitted(_ text: String, _ labels: [String: String], _ none: Bool) throws {
        #expect(try Self.target(text).admitsNone(labelled: labels) == none, "\(text) for \(labels)")
    }
}

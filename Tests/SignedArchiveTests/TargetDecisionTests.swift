import ClientFoundation
import ClientUpdater
import DeviceIdentity
import DeviceTargeting
import Foundation
import ReleaseSigning
import SignedArchive
import SignedManifest
import TestSupport
import Testing

/// Who takes which release, as pure decisions (docs/targeting.md): the target of the
/// newest release and of a restriction, pins, and the choice among the releases offered
/// beside the newest, each from values.
@Suite struct TargetDecisionTests {
    static let now = ManifestSamples.published.addingTimeInterval(3600)
    /// A valid id literal (the fallback is never taken).
    static let deviceId = DeviceID(String(repeating: "ab", count: 16)) ?? .random()

    static func policy(_ labels: [String: String]) throws -> ArchiveDecision.Policy {
        ArchiveDecision.Policy(
            app: "com.example.notes", channel: "stable", shellVersion: Version(1, 5, 0), now: now, labels: try DeviceLabels(labels))
    }

    static func manifest(_ version: String, _ change: (inout ManifestDraft) throws -> Void = { _ in }) throws -> Manifest {
        var draft = ManifestSamples.draft(version: version)
        try change(&draft)
        return try draft.signed(with: try Ed25519.PrivateKey.generate())
    }

    static func state(floor: String? = nil, blacklist: [String] = []) -> DeviceState {
        var state = DeviceState()
        state.archive = ArchiveMemory(highestAccepted: floor, newestPublished: nil)
        state.blacklist = blacklist
        return state
    }

    @Test func aTargetAdmitsItsDevicesAndTellsTheOthersWhyWithTheirOwnValues() throws {
        let m = try Self.manifest("1.2.3") { $0.target = try TargetExpression(parsing: "store in (12, 14)") }
        #expect(
            ArchiveDecision.decide(m, state: Self.state(), isUnpacked: false, policy: try Self.policy(["store": "12"]), deviceId: Self.deviceId)
                == .install(m))
        let out = ArchiveDecision.decide(m, state: Self.state(), isUnpacked: false, policy: try Self.policy(["store": "7"]), deviceId: Self.deviceId)
        #expect(out == .notTargeted("not in the target of release 1.2.3 `store in (12, 14)`: store=7; this device keeps what it runs"))
        let unlabelled = ArchiveDecision.decide(m, state: Self.state(), isUnpacked: false, policy: try Self.policy([:]), deviceId: Self.deviceId)
        #expect(unlabelled == .notTargeted("not in the target of release 1.2.3 `store in (12, 14)`: store unset; this device keeps what it runs"))
        var ignoring = try Self.policy(["store": "7"])
        ignoring.ignoreRollout = true
        guard case .notTargeted = ArchiveDecision.decide(m, state: Self.state(), isUnpacked: false, policy: ignoring, deviceId: Self.deviceId) else {
            Issue.record("--ignore-rollout overrode a signed target")
            return
        }
    }

    /// The rollout role's target narrows, never widens: a device must be in both.
    @Test func aRestrictionsTargetNarrowsTheReleasesTarget() async throws {
        let key = try Ed25519.PrivateKey.generate()
        var draft = ManifestSamples.draft(version: "1.2.3")
        draft.target = try TargetExpression(parsing: "ring = beta")
        let m = try draft.signed(with: key)
        var restrictionDraft = RestrictionDraft(for: m, issued: ManifestSamples.published, expires: Self.now.addingTimeInterval(60))
        restrictionDraft.target = try TargetExpression(parsing: "site = lobby or ring = stable")
        let r = try await restrictionDraft.sign(by: [key])
        let both = try Self.policy(["ring": "beta", "site": "lobby"])
        #expect(
            ArchiveDecision.decide(m, restriction: r, state: Self.state(), isUnpacked: false, policy: both, deviceId: Self.deviceId) == .install(m))
        let onlyRelease = ArchiveDecision.decide(
            m, restriction: r, state: Self.state(), isUnpacked: false, policy: try Self.policy(["ring": "beta"]), deviceId: Self.deviceId)
        guard case .notTargeted(let why) = onlyRelease else {
            Issue.record("the restriction's target did not hold: \(onlyRelease)")
            return
        }
        #expect(why.hasPrefix("not in the target `site = lobby or ring = stable` the rollout role's restriction of release 1.2.3 narrows it to"))
        let onlyRestriction = ArchiveDecision.decide(
            m, restriction: r, state: Self.state(), isUnpacked: false, policy: try Self.policy(["ring": "stable"]), deviceId: Self.deviceId)
        #expect(onlyRestriction == .notTargeted("not in the target of release 1.2.3 `ring = beta`: ring=stable; this device keeps what it runs"))
    }

    @Test func aPinHoldsItsDevicesBelowTheNewestAndOffersItsRelease() throws {
        let pinned = try Self.manifest("1.1.0")
        let newest = try Self.manifest("1.2.3") {
            $0.pins = [ReleasePin(target: try TargetExpression(parsing: "site = lobby"), release: AlongsideRelease(naming: pinned))]
        }
        let lobby = try Self.policy(["site": "lobby"])
        let (held, pin) = ArchiveDecision.decideNewest(newest, state: Self.state(), isUnpacked: false, policy: lobby, deviceId: { Self.deviceId })
        guard case .notTargeted(let why) = held else {
            Issue.record("the pin did not hold: \(held)")
            return
        }
        #expect(why == "pinned to 1.1.0 by the pin `site = lobby` (site=lobby): release 1.2.3 is not for this device; it stays at most on 1.1.0")
        #expect(ArchiveDecision.offeredBeside(newest, pin: pin, state: Self.state()) == [AlongsideRelease(naming: pinned)])
        #expect(ArchiveDecision.offeredBeside(newest, pin: pin, state: Self.state(floor: "1.2.0")).isEmpty, "nothing below the floor is read")
        #expect(ArchiveDecision.offeredBeside(newest, pin: pin, state: Self.state(blacklist: ["1.1.0"])).isEmpty, "nor a blacklisted release")
        let chosen = ArchiveDecision.chooseBeside(
            [pinned], state: Self.state(), policy: lobby, isUnpacked: { _ in false }, deviceId: { Self.deviceId })
        #expect(chosen?.0 == pinned && chosen?.1 == .install(pinned))
        // A device that already runs something newer is not taken down to it.
        #expect(
            ArchiveDecision.chooseBeside(
                [pinned], state: Self.state(floor: "1.2.0"), policy: lobby, isUnpacked: { _ in false }, deviceId: { Self.deviceId }) == nil)
        // The pin does not hold other devices, nor a device that already has the newest.
        let office = ArchiveDecision.decideNewest(
            newest, state: Self.state(), isUnpacked: false, policy: try Self.policy(["site": "office"]), deviceId: { Self.deviceId })
        #expect(office.0 == .install(newest) && office.pin == nil)
        #expect(
            ArchiveDecision.decideNewest(newest, state: Self.state(), isUnpacked: true, policy: lobby, deviceId: { Self.deviceId }).0
                == .upToDate(Version(1, 2, 3), recorded: false))
    }

    /// Beside the newest, the newest release that is for the device wins; a blacklisted,
    /// untargeted or below-the-floor one is passed over.
    @Test func theNewestReleaseBesideTheNewestThatIsForTheDeviceWins() throws {
        let base = try Self.manifest("1.0.0")
        let fix = try Self.manifest("1.1.0") { $0.target = try TargetExpression(parsing: "store = 12") }
        let policy = try Self.policy(["store": "7"])
        let choose = { (state: DeviceState, policy: ArchiveDecision.Policy, unpacked: Set<Version>) in
            ArchiveDecision.chooseBeside(
                [base, fix], state: state, policy: policy, isUnpacked: { unpacked.contains($0) }, deviceId: { Self.deviceId })
        }
        #expect(choose(Self.state(), policy, [])?.0 == base, "the fix is not for store 7")
        #expect(choose(Self.state(), try Self.policy(["store": "12"]), [])?.0 == fix)
        #expect(choose(Self.state(blacklist: ["1.1.0"]), try Self.policy(["store": "12"]), [])?.0 == base)
        #expect(choose(Self.state(), policy, [Version(1, 0, 0)])?.1 == .upToDate(Version(1, 0, 0), recorded: false))
        #expect(choose(Self.state(floor: "1.0.1"), policy, []) == nil)
    }
}

/// `id in cohort NAME` as a pure decision (docs/targeting.md#cohorts): a decision that
/// needs an answer it does not have says which file; with the answer it decides.
@Suite struct CohortDecisionTests {
    static let pilot = CohortReference(name: "pilot", digest: String(repeating: "cd", count: 32), count: 3)

    static func release(_ target: String) throws -> Manifest {
        try TargetDecisionTests.manifest("1.2.3") {
            $0.target = try TargetExpression(parsing: target)
            $0.cohorts = [Self.pilot]
        }
    }

    static func decide(_ m: Manifest, labels: [String: String], answer: Bool?) throws -> ArchiveDecision.Decision {
        var policy = try TargetDecisionTests.policy(labels)
        if let answer { policy.cohorts = CohortAnswers([Self.pilot.digest: answer]) }
        return ArchiveDecision.decide(
            m, state: TargetDecisionTests.state(), isUnpacked: false, policy: policy, deviceId: TargetDecisionTests.deviceId)
    }

    @Test func aLabelThatDecidesAsksNoCohort() throws {
        let m = try Self.release("ring = beta and id in cohort pilot")
        guard case .notTargeted(let why) = try Self.decide(m, labels: ["ring": "stable"], answer: nil) else {
            Issue.record("a stable device was not refused by its label")
            return
        }
        #expect(why.contains("ring=stable"))
        #expect(try Self.decide(m, labels: ["ring": "beta"], answer: nil) == .needsCohort(Self.pilot))
        #expect(try Self.decide(m, labels: ["ring": "beta"], answer: true) == .install(m))
        guard case .notTargeted = try Self.decide(m, labels: ["ring": "beta"], answer: false) else {
            Issue.record("a device not in the cohort was admitted")
            return
        }
        let either = try Self.release("ring = beta or id in cohort pilot")
        #expect(try Self.decide(either, labels: ["ring": "beta"], answer: nil) == .install(either), "`or` decided by the label")
        #expect(try Self.decide(either, labels: [:], answer: nil) == .needsCohort(Self.pilot))
    }

    /// A restriction may ask only about the cohorts the release names; another is false.
    @Test func aRestrictionsCohortTheReleaseDoesNotNameAdmitsNobody() async throws {
        let key = try Ed25519.PrivateKey.generate()
        var draft = ManifestSamples.draft(version: "1.2.3")
        draft.target = try TargetExpression(parsing: "ring = beta")
        let m = try draft.signed(with: key)
        var restrictionDraft = RestrictionDraft(
            for: m, issued: ManifestSamples.published, expires: TargetDecisionTests.now.addingTimeInterval(60))
        restrictionDraft.target = try TargetExpression(parsing: "id in cohort other")
        let restriction = try await restrictionDraft.sign(by: [key])
        let decision = ArchiveDecision.decide(
            m, restriction: restriction, state: TargetDecisionTests.state(), isUnpacked: false,
            policy: try TargetDecisionTests.policy(["ring": "beta"]), deviceId: TargetDecisionTests.deviceId)
        guard case .notTargeted = decision else {
            Issue.record("\(decision)")
            return
        }
    }

    /// A pin that asks about a cohort needs its answer before the newest is judged.
    @Test func aPinAskingACohortNeedsItsAnswerFirst() throws {
        let base = try TargetDecisionTests.manifest("1.0.0")
        let newest = try TargetDecisionTests.manifest("1.2.3") {
            $0.pins = [ReleasePin(target: try TargetExpression(parsing: "id in cohort pilot"), release: AlongsideRelease(naming: base))]
            $0.cohorts = [Self.pilot]
        }
        var policy = try TargetDecisionTests.policy([:])
        let (asked, _) = ArchiveDecision.decideNewest(
            newest, state: TargetDecisionTests.state(), isUnpacked: false, policy: policy, deviceId: { TargetDecisionTests.deviceId })
        #expect(asked == .needsCohort(Self.pilot))
        policy.cohorts = CohortAnswers([Self.pilot.digest: true])
        let (held, pin) = ArchiveDecision.decideNewest(
            newest, state: TargetDecisionTests.state(), isUnpacked: false, policy: policy, deviceId: { TargetDecisionTests.deviceId })
        guard case .notTargeted = held, pin?.release.version == base.version else {
            Issue.record("\(held)")
            return
        }
    }
}

import ClientFoundation
import ClientUpdater
import DeviceIdentity
import Foundation
import ReleaseSigning
import SignedArchive
import SignedManifest
import StrictJSON
import TestSupport
import Testing

/// The archive check's decision without files, network or clock: every branch of
/// ``ArchiveDecision`` from values (docs/formats.md#device-policy).
@Suite struct ArchiveDecisionTests {
    static let now = ManifestSamples.published.addingTimeInterval(3600)
    /// The device deciding (a valid id literal; the fallback is never taken).
    static let device = DeviceID(String(repeating: "0d", count: 16)) ?? .random()
    static let policy = ArchiveDecision.Policy(app: "com.example.notes", channel: "stable", shellVersion: Version(1, 5, 0), now: now)

    /// A signed manifest of `version` (the samples' app and channel, shells 1.0.0–2.0.0).
    static func manifest(_ version: String = "1.2.3", _ change: (inout ManifestDraft) -> Void = { _ in }) throws -> Manifest {
        var draft = ManifestSamples.draft(version: version)
        change(&draft)
        return try draft.signed(with: try Ed25519.PrivateKey.generate())
    }

    static func state(floor: String? = nil, newestPublished: String? = nil, blacklist: [String] = []) -> DeviceState {
        var state = DeviceState()
        state.archive = ArchiveMemory(highestAccepted: floor, newestPublished: newestPublished)
        state.blacklist = blacklist
        return state
    }

    // MARK: screen: the feed's manifest

    @Test func aFreshManifestOfThisDeviceIsTheCandidateAndItsPublishTimeIsRemembered() throws {
        let manifest = try Self.manifest()
        var state = Self.state()
        #expect(ArchiveDecision.screen(manifest, state: &state, held: [], policy: Self.policy) == .candidate(manifest))
        #expect(state.archive.newestPublished == RFC3339.format(ManifestSamples.published))
    }

    @Test func aManifestPublishedBeforeTheNewestAcceptedIsAReplay() throws {
        let manifest = try Self.manifest()
        var state = Self.state(newestPublished: RFC3339.format(ManifestSamples.published.addingTimeInterval(60)))
        guard case .stale(let reason) = ArchiveDecision.screen(manifest, state: &state, held: [], policy: Self.policy) else {
            Issue.record("a replay is not stale")
            return
        }
        #expect(reason.contains("a stale cache or a replay"))
    }

    /// Issue 65: with authenticated time, a manifest `published` beyond the latest time the
    /// servers vouch for is refused and named, and remembered nowhere; a newest `published`
    /// remembered beyond it (a release once signed in 2099) no longer makes every later
    /// release a replay: the next one accepted replaces it.
    @Test func aPublishedTimeBeyondTheAuthenticatedIntervalIsRefusedAndNoMeasureOfAReplay() throws {
        var policy = Self.policy
        policy.publishedCeiling = Self.now.addingTimeInterval(300)
        let far = try Self.manifest("1.3.0") {
            $0.published = Date(timeIntervalSince1970: 4_085_000_000)
            $0.expires = nil
        }
        var state = Self.state()
        let verdict = ArchiveDecision.screen(far, state: &state, held: [], policy: policy)
        guard case .rejected(let reason) = verdict else {
            Issue.record("\(verdict)")
            return
        }
        #expect(
            reason.hasPrefix(
                "rejected: release 1.3.0 was published at 2099-06-13T"), "\(reason)")
        #expect(reason.contains("after the latest time this device's time servers vouch for (\(RFC3339.format(Self.now.addingTimeInterval(300))))"))
        #expect(state.archive.newestPublished == nil, "a refused time is remembered nowhere")

        // Remembered from before: ignored with time servers, a replay without them.
        var frozen = Self.state(newestPublished: "2099-06-13T00:00:00Z")
        let fresh = try Self.manifest()
        #expect(ArchiveDecision.screen(fresh, state: &frozen, held: [], policy: policy) == .candidate(fresh))
        #expect(frozen.archive.newestPublished == RFC3339.format(ManifestSamples.published))
        var unauthenticated = Self.state(newestPublished: "2099-06-13T00:00:00Z")
        guard case .stale = ArchiveDecision.screen(fresh, state: &unauthenticated, held: [], policy: Self.policy) else {
            Issue.record("without time servers the memory stands")
            return
        }
    }

    /// Issue 65: a feed behind what this device took from offline media is no replay.
    @Test func aFeedBehindAReleaseFromMediaIsBehindTheStick() throws {
        var memory = ArchiveMemory(highestAccepted: "1.2.0", newestPublished: RFC3339.format(ManifestSamples.published.addingTimeInterval(60)))
        let feed = try Self.manifest("1.1.0")
        #expect(FeedRules.behindMedia(feed, memory: memory) == nil, "1.2.0 came from the feed: a replay stays a replay")
        memory.fromMedia = ["1.2.0": "2026-11-28T12:00:00Z"]
        #expect(FeedRules.behindMedia(feed, memory: memory) == Version(1, 2, 0))
        #expect(FeedRules.behindMedia(try Self.manifest("1.3.0"), memory: memory) == nil, "a newer feed is judged as ever")
    }

    @Test func revokingAHeldVersionSkipsAndBlacklistsIt() throws {
        let manifest = try Self.manifest("1.2.3") { $0.revoked = [Version(1, 1, 0)] }
        var state = Self.state()
        state.pending = "1.1.0"
        let verdict = ArchiveDecision.screen(manifest, state: &state, held: ["1.1.0"], policy: Self.policy)
        #expect(verdict == .revoked("release 1.2.3 revokes 1.1.0: this device leaves it and never selects it again"))
        #expect(state.blacklist == ["1.1.0"] && state.pending == nil)
    }

    @Test func revokingAVersionNotHeldBlacklistsItAndGoesOn() throws {
        let manifest = try Self.manifest("1.2.3") { $0.revoked = [Version(1, 1, 0)] }
        var state = Self.state()
        var listed = false
        let verdict = ArchiveDecision.screen(
            manifest, state: &state,
            held: {
                listed = true
                return Set(["1.0.0"])
            }(), policy: Self.policy)
        #expect(verdict == .candidate(manifest) && state.blacklist == ["1.1.0"] && listed)
    }

    @Test func theHeldVersionsAreReadOnlyWhenTheFleetRulesApply() throws {
        let other = try Self.manifest { $0.app = "com.example.other" }
        var state = Self.state()
        var listed = false
        _ = ArchiveDecision.screen(
            other, state: &state,
            held: {
                listed = true
                return []
            }(), policy: Self.policy)
        #expect(!listed)
    }

    @Test func anExpiredManifestIsAStaleFeed() throws {
        let manifest = try Self.manifest { $0.expires = ManifestSamples.published.addingTimeInterval(60) }
        var state = Self.state()
        let verdict = ArchiveDecision.screen(manifest, state: &state, held: [], policy: Self.policy)
        #expect(verdict == .stale("the feed is stale: release 1.2.3 expired at 2027-01-15T08:01:00Z; keeping what this device has"))
        #expect(state.archive.newestPublished == nil)
    }

    @Test func aReleaseForAnotherShellLooksInTheIndexAboveTheFloor() throws {
        let manifest = try Self.manifest {
            $0.minShellVersion = Version(3, 0, 0)
            $0.maxShellVersion = nil
        }
        var state = Self.state(floor: "1.0.0")
        #expect(ArchiveDecision.screen(manifest, state: &state, held: [], policy: Self.policy) == .incompatibleShell(floor: Version(1, 0, 0)))
        #expect(ArchiveDecision.noCompatibleRelease(manifest, policy: Self.policy).hasSuffix("; index.json has no newer compatible release"))
    }

    @Test func anotherAppOrAReleaseBelowTheFloorIsRejected() throws {
        var state = Self.state(floor: "2.0.0")
        let below = try Self.manifest("1.2.3")
        guard case .rejected(let reason) = ArchiveDecision.screen(below, state: &state, held: [], policy: Self.policy) else {
            Issue.record("a release below the floor is not rejected")
            return
        }
        #expect(reason.hasPrefix("rejected: "))
        let other = try Self.manifest { $0.channel = "beta" }
        guard case .rejected = ArchiveDecision.screen(other, state: &state, held: [], policy: Self.policy) else {
            Issue.record("another channel is not rejected")
            return
        }
    }

    @Test func aFallbackMustPassThePolicyAboveTheFloor() throws {
        #expect(ArchiveDecision.acceptsFallback(try Self.manifest("1.2.3"), floor: Version(1, 0, 0), policy: Self.policy))
        #expect(!ArchiveDecision.acceptsFallback(try Self.manifest("1.2.3"), floor: Version(1, 3, 0), policy: Self.policy))
    }

    // MARK: decide: the candidate release

    @Test func aBlacklistedReleaseIsSkippedWithoutReadingTheDeviceId() throws {
        let manifest = try Self.manifest()
        var read = false
        let decision = ArchiveDecision.decide(
            manifest, state: Self.state(blacklist: ["1.2.3"]), isUnpacked: false, policy: Self.policy,
            deviceId: {
                read = true
                return Self.device
            }())
        #expect(decision == .skip("release 1.2.3 is blacklisted on this device (it failed start-up twice)", waitsForRollout: false))
        #expect(!read)
    }

    /// A version a revocation blacklisted on another channel is refused as revoked, though
    /// the manifest met now does not revoke it: the memory of the revocation travels with
    /// the device from channel to channel.
    @Test func aReleaseRevokedOnAnotherChannelIsSkippedAsRevoked() throws {
        var state = Self.state()
        FeedRules.applyRevocations([Version(1, 2, 3)], to: &state)
        #expect(state.blacklist == ["1.2.3"] && state.archive.revoked == ["1.2.3"])
        var memory = state.archive
        #expect(ChannelChoice.follow("beta", home: "stable", memory: &memory))
        state.archive = memory
        let decision = ArchiveDecision.decide(
            try Self.manifest(), state: state, isUnpacked: false, policy: Self.policy, deviceId: Self.device)
        #expect(decision == .skip("release 1.2.3 is blacklisted on this device (it is revoked)", waitsForRollout: false))
        #expect(ArchiveDecision.isRevoked(try Self.manifest(), restriction: nil, state: state))
    }

    @Test func anUnpackedReleaseIsUpToDateAndSaysWhetherStateRecordedIt() throws {
        let manifest = try Self.manifest()
        let recorded = ArchiveDecision.decide(
            manifest, state: Self.state(floor: "1.2.3"), isUnpacked: true, policy: Self.policy, deviceId: Self.device)
        #expect(recorded == .upToDate(Version(1, 2, 3), recorded: true))
        let unrecorded = ArchiveDecision.decide(
            manifest, state: Self.state(floor: "1.0.0"), isUnpacked: true, policy: Self.policy, deviceId: Self.device)
        #expect(unrecorded == .upToDate(Version(1, 2, 3), recorded: false))
    }

    @Test func aPausedRolloutHoldsTheDeviceBackUnlessIgnored() throws {
        let manifest = try Self.manifest { $0.rollout = Rollout(steps: [.init(seconds: 0, percent: 100)], paused: true) }
        let held = ArchiveDecision.decide(manifest, state: Self.state(), isUnpacked: false, policy: Self.policy, deviceId: Self.device)
        #expect(held == .skip("the rollout of release 1.2.3 is paused; this device waits", waitsForRollout: true))
        var ignoring = Self.policy
        ignoring.ignoreRollout = true
        var read = false
        let taken = ArchiveDecision.decide(
            manifest, state: Self.state(), isUnpacked: false, policy: ignoring,
            deviceId: {
                read = true
                return Self.device
            }())
        #expect(taken == .install(manifest) && !read)
    }

    @Test func aReleaseWithoutRolloutIsInstalled() throws {
        let manifest = try Self.manifest()
        #expect(
            ArchiveDecision.decide(manifest, state: Self.state(), isUnpacked: false, policy: Self.policy, deviceId: Self.device) == .install(manifest)
        )
    }

    @Test func theFloorOnlyRises() {
        var state = Self.state(floor: "1.2.0")
        ArchiveDecision.raiseFloor(&state, to: Version(1, 1, 0))
        #expect(state.archive.highestAccepted == "1.2.0")
        ArchiveDecision.raiseFloor(&state, to: Version(1, 3, 0))
        #expect(state.archive.highestAccepted == "1.3.0")
    }
}

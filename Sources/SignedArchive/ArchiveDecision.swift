import ClientFoundation
import ClientUpdater
import DeviceIdentity
import DeviceTargeting
import Foundation
import SignedManifest
import StrictJSON

/// What one check of the signed-archive channel does with a verified manifest, decided
/// without I/O, as the watchdog decides a start-up: the inputs are values (the manifest,
/// the device's state and memory, its policy, what it holds), the output says up to date,
/// skip and why, or install this. ``ArchiveInstaller`` reads the feed, carries the
/// decision out and writes nothing else (docs/formats.md#device-policy).
///
/// A check decides in two stages, because the second may need `index.json`:
/// ``screen(_:state:held:policy:)`` judges the feed's manifest (fleet rules, device
/// policy), and ``decide(_:state:isUnpacked:policy:deviceId:)`` judges the release chosen.
package enum ArchiveDecision {
    /// The device's side of the rules, fixed for one check.
    package struct Policy: Sendable, Equatable {
        package var app: String
        package var channel: String
        package var shellVersion: Version
        /// The wall clock at the check (for `expires` and the rollout's steps).
        package var now: Date
        /// `install --ignore-rollout`.
        package var ignoreRollout: Bool
        /// The device's labels, read at the check (`config.json`): what a release's target reads.
        package var labels: DeviceLabels
        /// Whether the cohort files read so far list this device (`id in cohort NAME`).
        package var cohorts: CohortAnswers
        /// For a check from offline media: the signed digests of the manifests its index
        /// names, with the `offlineExpires` judged instead of their own `expires`
        /// (docs/offline-media.md#time-offline); empty online.
        package var offlineExpires: [String: Date] = [:]
        /// The latest time the device's time servers vouch for now, with the clock tolerance
        /// (nil: no authenticated time): a `published` beyond it is refused, and a newest
        /// `published` remembered beyond it is no measure of a replay.
        package var publishedCeiling: Date?

        /// The expiry `manifest` is judged by: the media's `offlineExpires` for a manifest
        /// its index names, else the manifest's own.
        package func expiry(of manifest: Manifest) -> Date? {
            offlineExpires.isEmpty ? manifest.expires : offlineExpires[manifest.signedDigest] ?? manifest.expires
        }

        package init(
            app: String, channel: String, shellVersion: Version, now: Date, ignoreRollout: Bool = false, labels: DeviceLabels = DeviceLabels(),
            cohorts: CohortAnswers = CohortAnswers()
        ) {
            self.app = app
            self.channel = channel
            self.shellVersion = shellVersion
            self.now = now
            self.ignoreRollout = ignoreRollout
            self.labels = labels
            self.cohorts = cohorts
        }
    }

    /// The verdict on the feed's manifest.
    package enum Verdict: Sendable, Equatable {
        /// The feed decides nothing (a replay, an expired manifest): keep what the device has.
        case stale(String)
        /// The manifest revokes a version this device holds: leave it first, install nothing.
        case revoked(String)
        /// The manifest's release is the candidate.
        case candidate(Manifest)
        /// The release does not run on this shell: look in `index.json` for one that does,
        /// above `floor`.
        case incompatibleShell(floor: Version?)
        /// The manifest breaks the device policy (another app or channel, below the floor).
        case rejected(String)
    }

    /// What to do with the candidate release.
    package enum Decision: Sendable, Equatable {
        /// The release is already in `clients/`; `recorded` is false when no state recorded
        /// its promotion (a run that died after promoting it), so the check reports it installed.
        case upToDate(Version, recorded: Bool)
        /// Not now, and why; `waitsForRollout` when the staged rollout holds this device back
        /// (the manifest is kept so the next check decides again, even on a 304).
        case skip(String, waitsForRollout: Bool)
        /// The release's target does not admit this device, and why: it keeps what it runs,
        /// and the manifest is kept so the next check decides again (labels may change).
        case notTargeted(String)
        /// Download, verify, unpack and promote this release.
        case install(Manifest)
        /// Whether a target admits this device depends on a cohort file it has no answer
        /// for: read it (``CohortAnswers``) and decide again.
        case needsCohort(CohortReference)
    }

    /// Judges a verified manifest: for a fresh one of this device's app and channel, the
    /// fleet rules first (replay, then revocations, which `state` records), then the device
    /// policy (app, channel, floor, shell, expiry).
    /// - Parameters:
    ///   - restriction: the rollout role's restriction in force for this manifest
    ///     (``Restriction/check(_:for:root:now:source:)``); its revocations join the manifest's.
    ///   - state: the device's state; its memory of published times and its blacklist are updated.
    ///   - held: every version this device has (current, pending, installed), read only
    ///     when the manifest revokes some.
    package static func screen(
        _ manifest: Manifest, restriction: Restriction? = nil, state: inout DeviceState, held: @autoclosure () throws -> Set<String>,
        policy: Policy
    ) rethrows -> Verdict {
        // An expired manifest is reported as such by the policy below; a fresh one of this
        // device's app and channel first passes the fleet rules (replay, revocation).
        // A signer's clock that ran ahead: named, and remembered nowhere (docs/device-time.md).
        if let future = FeedRules.futureProblem(manifest, ceiling: policy.publishedCeiling) { return .rejected("rejected: " + future) }
        let fresh = policy.expiry(of: manifest).map { $0 > policy.now } ?? true
        if fresh, manifest.app == policy.app, manifest.channel == policy.channel {
            let ceiling = policy.publishedCeiling
            if let replay = FeedRules.replayProblem(manifest, memory: state.archive, ceiling: ceiling) { return .stale(replay) }
            FeedRules.recordPublished(manifest, in: &state.archive, ceiling: ceiling)
            let held = try held()
            let restricted = restriction?.revoked ?? []
            let revoked = FeedRules.applyRevocations(manifest.revoked + restricted, to: &state).filter(held.contains)
            if !revoked.isEmpty {
                // Leave first (the updater switches away from a running revoked version);
                // the next check installs what the feed offers.
                let who =
                    revoked.allSatisfy { v in restricted.contains { $0.description == v } } && !restricted.isEmpty
                    ? "the rollout role's restriction of release \(manifest.version)" : "release \(manifest.version)"
                return .revoked(
                    "\(who) revokes \(revoked.joined(separator: ", ")): this device leaves it and never selects it again")
            }
        }
        let floor = state.archive.highestAccepted.flatMap(Version.init)
        switch ManifestPolicy.evaluate(
            manifest, app: policy.app, channel: policy.channel, shellVersion: policy.shellVersion, floor: floor, now: policy.now,
            expires: policy.expiry(of: manifest))
        {
        case .accept:
            return .candidate(manifest)
        case .expired(let date):
            return .stale("the feed is stale: release \(manifest.version) expired at \(RFC3339.format(date)); keeping what this device has")
        case .incompatibleShell:
            return .incompatibleShell(floor: floor)
        case let decision:
            return .rejected("rejected: " + decision.message(for: manifest))
        }
    }

    /// Whether a release of `index.json` may stand in for an incompatible manifest.
    package static func acceptsFallback(_ release: Manifest, floor: Version?, policy: Policy) -> Bool {
        ManifestPolicy.evaluate(
            release, app: policy.app, channel: policy.channel, shellVersion: policy.shellVersion, floor: floor, now: policy.now,
            expires: policy.expiry(of: release)) == .accept
    }

    /// Why no release runs on this shell (the manifest's and `index.json`'s).
    package static func noCompatibleRelease(_ manifest: Manifest, policy: Policy) -> String {
        ManifestPolicy.Decision.incompatibleShell(shell: policy.shellVersion).message(for: manifest)
            + "; index.json has no newer compatible release"
    }

    /// True when `candidate` is blacklisted because a signed revocation says so: its own
    /// manifest's, the restriction's, or one this device met before on any channel.
    package static func isRevoked(_ candidate: Manifest, restriction: Restriction?, state: DeviceState) -> Bool {
        (restriction?.revoked ?? []).contains(candidate.version) || candidate.revoked.contains(candidate.version)
            || (state.archive.revoked ?? []).contains(candidate.version.description)
    }

    /// Judges the candidate release: blacklisted (it failed start-up twice here, or it is
    /// revoked), already unpacked, held back by its staged rollout (and the `restriction`
    /// in force for it), or to install.
    /// - Parameters:
    ///   - isUnpacked: `clients/v<version>` exists.
    ///   - deviceId: this device's id, read only when the rollout decides.
    package static func decide(
        _ candidate: Manifest, restriction: Restriction? = nil, state: DeviceState, isUnpacked: Bool, policy: Policy,
        deviceId: @autoclosure () throws -> DeviceID
    ) rethrows -> Decision {
        if state.blacklist.contains(candidate.version.description) {
            let why = isRevoked(candidate, restriction: restriction, state: state) ? "it is revoked" : "it failed start-up twice"
            return .skip("release \(candidate.version) is blacklisted on this device (\(why))", waitsForRollout: false)
        }
        if isUnpacked {
            let recorded = state.archive.highestAccepted.flatMap(Version.init).map { candidate.version <= $0 } ?? false
            return .upToDate(candidate.version, recorded: recorded)
        }
        // The target before the rollout: a device outside it is not waiting for anything.
        // `--ignore-rollout` does not override it: who a release is for is signed.
        switch try FeedRules.targetVerdict(
            candidate, restriction: restriction, cohorts: policy.cohorts,
            device: { TargetDevice(id: try deviceId(), labels: policy.labels) })
        {
        case .admitted: break
        case .refused(let why): return .notTargeted(why)
        case .needsCohort(let cohort): return .needsCohort(cohort)
        }
        if !policy.ignoreRollout,
            let refusal = FeedRules.rolloutRefusal(candidate, restriction: restriction, deviceId: try deviceId(), now: policy.now)
        {
            return .skip(refusal, waitsForRollout: true)
        }
        return .install(candidate)
    }

    /// Judges the channel's newest release for this device: a pin of its manifest that
    /// holds the device below it first (docs/targeting.md#pins), then
    /// ``decide(_:restriction:state:isUnpacked:policy:deviceId:)``.
    /// - Returns: the decision and the pin that holds the device, if any (its release is
    ///   then offered as if beside the newest, ``chooseBeside(_:state:policy:isUnpacked:deviceId:)``).
    package static func decideNewest(
        _ newest: Manifest, restriction: Restriction? = nil, state: DeviceState, isUnpacked: Bool, policy: Policy,
        deviceId: () throws -> DeviceID
    ) rethrows -> (Decision, pin: ReleasePin?) {
        guard !newest.pins.isEmpty else {
            return (try decide(newest, restriction: restriction, state: state, isUnpacked: isUnpacked, policy: policy, deviceId: try deviceId()), nil)
        }
        let id = try deviceId()
        let device = TargetDevice(id: id, labels: policy.labels)
        let (pin, missing) = policy.cohorts.evaluate(for: newest) { ReleasePin.first(of: newest.pins, admitting: device, inCohort: $0) }
        if let missing { return (.needsCohort(missing), nil) }
        if let pin, newest.version > pin.release.version, !isUnpacked {
            return (.notTargeted(FeedRules.pinNote(pin, over: newest, device: device)), pin)
        }
        return (decide(newest, restriction: restriction, state: state, isUnpacked: isUnpacked, policy: policy, deviceId: id), pin)
    }

    /// What a device takes of the releases offered beside the newest, when the newest is
    /// not for it (docs/targeting.md#two-releases-at-once): the newest of `offered` that is,
    /// by the same rules (not blacklisted, not below the floor, the policy, the target, the
    /// rollout); nil when none is.
    package static func chooseBeside(
        _ offered: [Manifest], state: DeviceState, policy: Policy, isUnpacked: (Version) -> Bool, deviceId: () throws -> DeviceID
    ) rethrows -> (Manifest, Decision)? {
        let floor = state.archive.highestAccepted.flatMap(Version.init)
        for release in offered.sorted(by: { $1.version < $0.version }) {
            if state.blacklist.contains(release.version.description) { continue }
            if let floor, release.version < floor { continue }  // this device accepted a newer release: never down
            guard acceptsFallback(release, floor: floor, policy: policy) else { continue }
            let decision = try decide(release, state: state, isUnpacked: isUnpacked(release.version), policy: policy, deviceId: try deviceId())
            switch decision {
            case .install, .upToDate, .needsCohort: return (release, decision)
            case .skip, .notTargeted: continue
            }
        }
        return nil
    }

    /// The releases a device in `state` may take beside `newest`, newest first: those it
    /// names `alongside`, and the release of a `pin` that holds the device (then nothing
    /// above it); none blacklisted or below the floor, so the channel reads nothing of them.
    package static func offeredBeside(_ newest: Manifest, pin: ReleasePin?, state: DeviceState) -> [AlongsideRelease] {
        var offered = newest.alongside
        if let pin, pin.release.version < newest.version {
            offered = offered.filter { $0.version < pin.release.version } + [pin.release]
        }
        let floor = state.archive.highestAccepted.flatMap(Version.init)
        return offered.filter { named in
            !state.blacklist.contains(named.version.description) && floor.map { named.version >= $0 } != false
        }.sorted { $1.version < $0.version }
    }

    /// `state`'s floor raised to `version` (never lowered).
    package static func raiseFloor(_ state: inout DeviceState, to version: Version) {
        if let floor = state.archive.highestAccepted.flatMap(Version.init), version <= floor { return }
        state.archive.highestAccepted = version.description
    }
}

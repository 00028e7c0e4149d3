import ClientFoundation
import ClientUpdater
import DeviceIdentity
import DeviceTargeting
import Foundation
import SignedManifest
import StrictJSON

/// What a device does with the fleet fields of a verified manifest of its own app and
/// channel: replay protection, revocation and the staged-rollout gate. Pure functions.
package enum FeedRules {
    /// A manifest published before the newest one this device accepted is a replay (a
    /// stale CDN cache serving yesterday's "100 %" after a pause): it decides nothing.
    ///
    /// A newest `published` beyond `ceiling` (the latest time the device's time servers vouch
    /// for) was signed by a clock that ran ahead: it is no measure of a replay, or one release
    /// signed in 2099 would freeze the channel for ever. It is then ignored, and replaced by
    /// the next manifest accepted.
    package static func replayProblem(_ manifest: Manifest, memory: ArchiveMemory, ceiling: Date? = nil) -> String? {
        guard let seenText = memory.newestPublished, let seen = RFC3339.parse(seenText), manifest.published < seen else { return nil }
        if let ceiling, seen > ceiling { return nil }
        return "the manifest of release \(manifest.version) was published at \(RFC3339.format(manifest.published)), "
            + "before the newest one this device accepted (\(seenText)): a stale cache or a replay; keeping what this device has"
    }

    /// A feed behind what this device took from offline media (docs/offline-media.md#mixed-sites):
    /// the manifest is a release below the highest this device accepted, and that release came
    /// from a stick. Its older `published` is no replay and no attack: the stick is newer.
    /// - Returns: the release from media this device holds above the feed's, or nil.
    package static func behindMedia(_ manifest: Manifest, memory: ArchiveMemory) -> Version? {
        guard let floor = memory.highestAccepted.flatMap(Version.init), manifest.version < floor, memory.fromMedia?[floor.description] != nil
        else { return nil }
        return floor
    }

    /// Remembers `manifest`'s publish time as the newest accepted.
    package static func recordPublished(_ manifest: Manifest, in memory: inout ArchiveMemory, ceiling: Date? = nil) {
        if replayProblem(manifest, memory: memory, ceiling: ceiling) == nil { memory.newestPublished = RFC3339.format(manifest.published) }
    }

    /// Why a manifest `published` beyond `ceiling` (the latest time the device's time servers
    /// vouch for, with the clock tolerance) is not taken: its signer's clock ran ahead, and
    /// accepting it would make every later release a replay. Nil without a ceiling or within it.
    package static func futureProblem(_ manifest: Manifest, ceiling: Date?) -> String? {
        guard let ceiling, manifest.published > ceiling else { return nil }
        return "release \(manifest.version) was published at \(RFC3339.format(manifest.published)), after the latest time this device's "
            + "time servers vouch for (\(RFC3339.format(ceiling))): its signer's clock ran ahead; publish it again from a machine on the right time"
    }

    /// Puts every revoked version on the blacklist (never selected, staged or installed
    /// again) and drops it as pending or last known good; the updater then leaves a
    /// running revoked version. - Returns: the versions newly revoked on this device.
    @discardableResult
    package static func applyRevocations(_ revoked: [Version], to state: inout DeviceState) -> [String] {
        var newly: [String] = []
        var known = state.archive.revoked ?? []
        for version in revoked.map(\.description) {
            if !known.contains(version) { known.append(version) }
            guard !state.blacklist.contains(version) else { continue }
            state.blacklist.append(version)
            state.retry.removeAll { $0 == version }
            newly.append(version)
        }
        if !known.isEmpty, known != state.archive.revoked ?? [] { state.archive.revoked = known }
        if let pending = state.pending, state.blacklist.contains(pending) { state.pending = nil }
        if let good = state.lastKnownGood, state.blacklist.contains(good) { state.lastKnownGood = nil }
        return newly
    }

    /// Why this device does not take `manifest` now under its staged rollout, or nil when
    /// it does (no rollout, or its bucket is within the percent in force).
    ///
    /// With a `restriction` in force for this release the rollout in force is the
    /// stricter of the two: paused when either is, the lower percent (a manifest without
    /// `rollout` counts as 100 %).
    package static func rolloutRefusal(_ manifest: Manifest, restriction: Restriction? = nil, deviceId: DeviceID, now: Date) -> String? {
        let restriction = restriction.flatMap { $0.version == manifest.version ? $0 : nil }
        guard manifest.rollout != nil || restriction != nil else { return nil }
        let by = " by the rollout role's restriction until \(restriction.map { RFC3339.format($0.expires) } ?? "")"
        if manifest.rollout?.paused == true { return "the rollout of release \(manifest.version) is paused; this device waits" }
        if restriction?.paused == true { return "the rollout of release \(manifest.version) is paused\(by); this device waits" }
        let own = manifest.rollout?.percent(at: now) ?? 100
        let percent = min(own, restriction?.percent ?? 100)
        let rollout = manifest.rollout ?? .percent(100)
        let draw = rollout.drawName(version: manifest.version.description)
        let bucket = Rollout.bucket(channel: manifest.channel, draw: draw, deviceId: deviceId.text)
        let places = rollout.places(percent: percent)
        guard !places.contains(bucket) else { return nil }
        let capped = percent < own ? " (capped\(by))" : ""
        let range = rollout.from == 0 && rollout.draw == nil ? "" : " (places \(places.lowerBound)…\(places.upperBound - 1) of the draw \(draw))"
        return
            "release \(manifest.version) is rolling out to \(Self.format(percent)) % of devices\(capped)\(range); this device (place \(bucket) of 10000) waits"
    }

    /// Whether a target admits a device.
    package enum TargetVerdict: Sendable, Equatable {
        /// No target refuses the device.
        case admitted
        /// Why a target does not admit the device.
        case refused(String)
        /// The answer depends on a cohort file this device has no answer for yet.
        case needsCohort(CohortReference)
    }

    /// Whether `device` is among the devices `manifest` is for: the manifest's signed
    /// `target`, and the target of the rollout role's `restriction` in force for this
    /// release, which can only narrow it (both must admit the device). `device` is read
    /// only when a target decides; `cohorts` answers `id in cohort NAME` for the cohorts
    /// the manifest names.
    package static func targetVerdict(
        _ manifest: Manifest, restriction: Restriction? = nil, cohorts: CohortAnswers = CohortAnswers(),
        device readDevice: () throws -> TargetDevice
    ) rethrows -> TargetVerdict {
        let restriction = restriction.flatMap { $0.version == manifest.version ? $0 : nil }
        guard manifest.target != nil || restriction?.target != nil else { return .admitted }
        let device = try readDevice()
        for (target, restricted) in [(manifest.target, false), (restriction?.target, true)] {
            guard let target else { continue }
            let (admitted, missing) = cohorts.evaluate(for: manifest) { target.admits(device, inCohort: $0) }
            if let missing { return .needsCohort(missing) }
            if admitted { continue }
            guard restricted, let restriction else {
                return .refused(
                    "not in the target of release \(manifest.version) `\(target)`: \(target.explain(device)); this device keeps what it runs")
            }
            return .refused(
                "not in the target `\(target)` the rollout role's restriction of release \(manifest.version) narrows it to "
                    + "until \(RFC3339.format(restriction.expires)): \(target.explain(device)); this device keeps what it runs")
        }
        return .admitted
    }

    /// Why a pinned device does not take `release` (docs/targeting.md#pins).
    package static func pinNote(_ pin: ReleasePin, over release: Manifest, device: TargetDevice) -> String {
        "pinned to \(pin.release.version) by the pin `\(pin.target)` (\(pin.target.explain(device))): "
            + "release \(release.version) is not for this device; it stays at most on \(pin.release.version)"
    }

    static func format(_ percent: Double) -> String {
        percent == percent.rounded() ? String(Int(percent)) : String(format: "%.2f", percent)
    }
}

import ClientUpdater
import Foundation
import SignedManifest
import StrictJSON

/// What a device does with the fleet fields of a verified manifest of its own app and
/// channel: replay protection, revocation and the staged-rollout gate. Pure functions.
package enum FeedRules {
    /// A manifest published before the newest one this device accepted is a replay (a
    /// stale CDN cache serving yesterday's "100 %" after a pause): it decides nothing.
    package static func replayProblem(_ manifest: Manifest, memory: ArchiveMemory) -> String? {
        guard let seenText = memory.newestPublished, let seen = RFC3339.parse(seenText), manifest.published < seen else { return nil }
        return "the manifest of release \(manifest.version) was published at \(RFC3339.format(manifest.published)), "
            + "before the newest one this device accepted (\(seenText)): a stale cache or a replay; keeping what this device has"
    }

    /// Remembers `manifest`'s publish time as the newest accepted.
    package static func recordPublished(_ manifest: Manifest, in memory: inout ArchiveMemory) {
        if replayProblem(manifest, memory: memory) == nil { memory.newestPublished = RFC3339.format(manifest.published) }
    }

    /// Puts every revoked version on the blacklist (never selected, staged or installed
    /// again) and drops it as pending or last known good; the updater then leaves a
    /// running revoked version. - Returns: the versions newly revoked on this device.
    @discardableResult
    package static func applyRevocations(_ revoked: [Version], to state: inout DeviceState) -> [String] {
        var newly: [String] = []
        for version in revoked.map(\.description) where !state.blacklist.contains(version) {
            state.blacklist.append(version)
            state.retry.removeAll { $0 == version }
            newly.append(version)
        }
        if let pending = state.pending, state.blacklist.contains(pending) { state.pending = nil }
        if let good = state.lastKnownGood, state.blacklist.contains(good) { state.lastKnownGood = nil }
        return newly
    }

    /// Why this device does not take `manifest` now under its staged rollout, or nil when
    /// it does (no rollout, or its bucket is within the percent in force).
    package static func rolloutRefusal(_ manifest: Manifest, deviceId: String, now: Date) -> String? {
        guard let rollout = manifest.rollout else { return nil }
        if rollout.paused { return "the rollout of release \(manifest.version) is paused; this device waits" }
        let bucket = Rollout.bucket(channel: manifest.channel, version: manifest.version.description, deviceId: deviceId)
        guard !rollout.admits(bucket: bucket, at: now) else { return nil }
        let percent = rollout.percent(at: now)
        return "release \(manifest.version) is rolling out to \(Self.format(percent)) % of devices; this device (place \(bucket) of 10000) waits"
    }

    static func format(_ percent: Double) -> String {
        percent == percent.rounded() ? String(Int(percent)) : String(format: "%.2f", percent)
    }
}

import ClientFoundation
import ClientUpdater
import DeviceIdentity
import Foundation
import SignedManifest

extension ArchiveInstaller {
    /// The decision on `candidate` (the feed's `newest` manifest, or a release of
    /// `index.json` standing in for it): the newest and its pins first, then, when the
    /// newest is not for this device, the newest release offered beside it that is
    /// (docs/targeting.md#two-releases-at-once). `.needsCohort` when a target's answer
    /// depends on a cohort file `policy` has no answer for.
    /// - Returns: the decision, and why the newest is not for this device when a release
    ///   offered beside it is chosen.
    func decideRelease(
        _ candidate: Manifest, newest manifest: Manifest, restriction: Restriction?, state: DeviceState, isUnpacked: Bool,
        policy: ArchiveDecision.Policy, manifestURL: URL, verifier: ManifestVerifier, body: [UInt8], deferred: inout DeferredManifest,
        deviceId: () throws -> DeviceID
    ) async throws -> (ArchiveDecision.Decision, besideNote: String?) {
        var decision: ArchiveDecision.Decision
        /// A pin of the newest manifest that holds this device (docs/targeting.md#pins).
        var pin: ReleasePin?
        if candidate == manifest {
            (decision, pin) = try ArchiveDecision.decideNewest(
                candidate, restriction: restriction, state: state, isUnpacked: isUnpacked, policy: policy, deviceId: deviceId)
        } else {
            decision = try ArchiveDecision.decide(
                candidate, restriction: restriction, state: state, isUnpacked: isUnpacked, policy: policy, deviceId: try deviceId())
        }
        switch decision {
        case .skip(let why, _), .notTargeted(let why):
            // Not for this device: the newest of the releases offered beside it that is.
            // The newest is kept, so the next check, even a 304, decides again (labels
            // change, percents grow).
            guard candidate == manifest else { return (decision, nil) }
            let wanted = ArchiveDecision.offeredBeside(manifest, pin: pin, state: state)
            let offered = try await offeredManifests(wanted, newest: manifest, manifestURL: manifestURL, verifier: verifier)
            guard
                let (release, chosen) = try ArchiveDecision.chooseBeside(
                    offered, state: state, policy: policy,
                    isUnpacked: { FileManager.default.fileExists(atPath: layout.clientDirectory($0)) }, deviceId: deviceId)
            else { return (decision, nil) }
            if case .needsCohort = chosen { return (chosen, nil) }
            channel.logger.debug("release \(manifest.version) is not for this device; release \(release.version), offered beside it, is")
            deferred.keep(body)
            return (chosen, why)
        default:
            return (decision, nil)
        }
    }
}

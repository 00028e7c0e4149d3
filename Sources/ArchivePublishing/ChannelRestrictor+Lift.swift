import ClientFoundation
import Foundation
import ReleaseSigning
import SignedManifest
import StrictJSON

/// What lifting a halt left in `restriction.json` (``ChannelRestrictor/lift(releases:channel:signers:release:basis:keepFile:now:)``).
package enum LiftOutcome: Sendable, Equatable {
    /// The pause went; the other limits in force (percent, revocations, apply policy,
    /// target) hold on in this restriction, signed by the rollout key.
    case replaced(Restriction)
    /// Nothing else was held back: `restriction.json` is gone, and devices read the `404`
    /// as "no restriction" (docs/formats.md#restrictions).
    case removed
    /// Nothing else was held back, and the file had to stay (a store that is only ever
    /// written, never pruned, still offers the halt): this restriction holds nothing the
    /// manifest does not (its cap is the manifest's own highest percent).
    case neutral(Restriction)
}

extension ChannelRestrictor {
    /// Lifts the halt of the channel's current release: the restriction in force loses its
    /// pause and keeps everything else, signed by the rollout role's keys alone. The
    /// manifest as the release role signed it stands again. Under the channel's lock.
    ///
    /// - Parameters:
    ///   - release: lift only while the channel's release is this version (nil: any).
    ///   - basis: lift only while `restriction.json` still holds these bytes (nil: any).
    ///   - keepFile: when nothing else is held back, write a restriction that holds nothing
    ///     the manifest does not, rather than remove the file (for a store the file is
    ///     pushed to: a push uploads files and deletes none).
    /// - Returns: the restriction lifted and what replaced it.
    /// - Throws: `ArchivePublishingError` `.notFound` without a manifest or a rollout role,
    ///   `.untrustedKey`/`.thresholdNotMet` for signers that are not enough rollout keys,
    ///   `.invalidArgument` when no restriction in force pauses the release, `.contended`
    ///   when the release or `restriction.json` changed since `release`/`basis` were read.
    package static func lift(
        releases: String, channel: String, signers: [any DocumentSigner], release: Version? = nil, basis: RestrictionBasis? = nil,
        keepFile: Bool = false, now: Date = Date()
    ) async throws -> (lifted: Restriction, outcome: LiftOutcome) {
        let folder = releases + "/" + channel
        let manifestPath = folder + "/manifest.json"
        let restrictionPath = folder + "/restriction.json"
        guard FileManager.default.fileExists(atPath: manifestPath) else {
            throw ArchivePublishingError(.notFound, "\(manifestPath) does not exist: publish a release on channel \(channel) first")
        }
        let lock = try DirectoryLock(folder)
        defer { lock.release() }
        let root = try requireRolloutSigners(signers, inChannelFolder: folder)
        guard let data = FileManager.default.contents(atPath: manifestPath) else {
            throw ArchivePublishingError(.io, "cannot read \(manifestPath)")
        }
        let object = try StrictJSON.parseObject(data, limits: .manifest, source: manifestPath)
        let manifest = try Manifest.validate(object).mapError { $0.error(context: manifestPath) }.get()
        if let release, release != manifest.version {
            throw ArchivePublishingError(
                .contended, "channel \(channel)'s release is now \(manifest.version), not \(release) whose halt was to be lifted: nothing changed")
        }
        let bytes = FileManager.default.contents(atPath: restrictionPath)
        if let basis, RestrictionBasis(bytes) != basis {
            throw ArchivePublishingError(.contended, "\(restrictionPath) changed since it was read: nothing changed")
        }
        let notHalted = ArchivePublishingError(
            .invalidArgument, "release \(manifest.version) on channel \(channel) is not halted by a restriction in force: nothing to lift")
        guard let bytes else { throw notHalted }
        let verdict: RestrictionVerdict
        do {
            verdict = try Restriction.check(bytes, for: manifest, root: root, now: now, source: restrictionPath)
        } catch let error as SignedManifestError {
            throw ArchivePublishingError(.invalidArgument, "\(error.message): devices refuse it already; nothing changed")
        }
        guard case .inForce(let inForce) = verdict, inForce.paused else { throw notHalted }

        let holdsMore = inForce.percent != nil || !inForce.revoked.isEmpty || inForce.apply != nil || inForce.target != nil
        guard holdsMore || keepFile else {
            do {
                try FileManager.default.removeItem(atPath: restrictionPath)
            } catch {
                throw ArchivePublishingError(.io, "cannot remove \(restrictionPath): \(error.localizedDescription)")
            }
            return (inForce, .removed)
        }
        let issued = max(now, inForce.issued)
        var draft = RestrictionDraft(
            for: manifest, issued: issued, expires: inForce.expires, percent: inForce.percent, paused: false, revoked: inForce.revoked)
        draft.apply = inForce.apply
        draft.target = inForce.target
        if !holdsMore { draft.percent = manifest.rollout?.highestPercent ?? 100 }
        let restriction: Restriction
        do {
            restriction = try await draft.sign(by: signers, source: restrictionPath)
        } catch let error as ReleaseSigningError where error.code == .restrictionRefused {
            throw ArchivePublishingError(.invalidArgument, error.message)
        }
        do {
            try AtomicFile.write(Data(restriction.jsonBytes()), to: restrictionPath)
        } catch let error as any ClientctlError {
            throw ArchivePublishingError(.io, error.message)
        }
        return (inForce, holdsMore ? .replaced(restriction) : .neutral(restriction))
    }
}

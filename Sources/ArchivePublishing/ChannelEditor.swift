import ApplyPolicy
import ClientFoundation
import DeviceTargeting
import Foundation
import ReleaseSigning
import SignedManifest
import StrictJSON

/// A change to the release a channel offers now (`manifest.json`), made by re-signing it.
public enum ManifestChange: Sendable, Equatable {
    /// Start or change a staged rollout.
    case setRollout(Rollout)
    /// Stop new installs (installed devices are left alone).
    case pause
    /// Go on with the rollout as scheduled.
    case resume
    /// Every device takes the release: the rollout field goes.
    case complete
    /// Devices must leave these versions and never select them again.
    case revoke([Version])
    /// Which devices the release is for; `nil`: every device of the channel
    /// (docs/targeting.md).
    case setTarget(TargetExpression?)
    /// The older releases offered beside this one (`index.json` versions; empty: none),
    /// docs/targeting.md#two-releases-at-once.
    case setAlongside([Version])
    /// Hold the devices `target` admits at most on `version`, a release of `index.json`
    /// (docs/targeting.md#pins); a pin with the same target is replaced.
    case pin(TargetExpression, Version)
    /// Drop the pin of this target; `nil`: every pin.
    case unpin(TargetExpression?)
    /// Nothing but what every signing does: name the cohort lists the channel holds now
    /// (docs/targeting.md#cohorts), after `clientctl cohort set`.
    case refreshCohorts
}

/// What an operator names on purpose when a channel's release is re-signed: each flag
/// allows one act that is refused without it (docs/guides/releasing.md#acts-that-need-a-flag).
public struct EditFlags: Sendable, Equatable {
    /// `--lift-halt`: re-sign a release the channel's `restriction.json` halts, lifting it.
    public var liftHalt: Bool
    /// `--allow-far-future`: stamp a `published` more than a year beyond the channel's newest.
    public var allowFarFuture: Bool
    /// `--allow-expired`: pin devices to a release whose manifest has expired (they keep
    /// what they run until it is unpinned).
    public var allowExpired: Bool

    /// Flags; none by default.
    public init(liftHalt: Bool = false, allowFarFuture: Bool = false, allowExpired: Bool = false) {
        self.liftHalt = liftHalt
        self.allowFarFuture = allowFarFuture
        self.allowExpired = allowExpired
    }
}

extension ManifestChange {
    /// The command that makes this change, for messages.
    var act: String {
        switch self {
        case .setRollout: "rollout set"
        case .pause: "rollout pause"
        case .resume: "rollout resume"
        case .complete: "rollout complete"
        case .revoke: "revoke"
        case .setTarget: "rollout set --target"
        case .setAlongside: "rollout set --alongside"
        case .pin: "rollout pin"
        case .unpin: "rollout unpin"
        case .refreshCohorts: "cohort set"
        }
    }
}

/// Re-signs a channel's current release with a ``ManifestChange`` (`clientctl rollout …`,
/// `clientctl revoke`): the same release and archive, new fields, a `published` time later
/// than the last one (devices refuse an older manifest as a replay), and while a rollout is
/// active a short `expires` unless one is given. Under the channel's publishing lock, the
/// release's `index.json` entry first, then `manifest.json`, each replaced atomically.
public enum ChannelEditor {
    /// How long a manifest with an active rollout stays valid by default: a stale copy (a
    /// CDN serving yesterday's "100 %" after a pause) stops being used within this time.
    public static let rolloutExpiry: TimeInterval = 48 * 3_600

    /// The default `expires` of a manifest with `rollout`: ``rolloutExpiry`` after its last
    /// step begins (or after `published` when that is later), so a schedule never outlives
    /// its own manifest.
    public static func defaultExpiry(for rollout: Rollout, published: Date) -> Date {
        let lastStep = (rollout.start ?? published).addingTimeInterval(TimeInterval(rollout.steps.map(\.seconds).max() ?? 0))
        return max(published, lastStep).addingTimeInterval(rolloutExpiry)
    }

    /// Applies `change` and returns the new manifest.
    /// - Parameters:
    ///   - change: what to change in the channel's newest release.
    ///   - releases: the release folder (`<releases>/<channel>/manifest.json`).
    ///   - channel: the channel to edit.
    ///   - signers: who signs the changed manifest (a threshold of the trust root's release keys).
    ///   - now: the time of the change.
    ///   - expires: the new `expires`; nil keeps the default rule above (and no
    ///     `expires` once the rollout is complete).
    ///   - flags: what the operator named on purpose: lifting a halt, a clock far ahead, a
    ///     pin to an expired release.
    /// - Throws: `ArchivePublishingError`: `.notFound` without a manifest, `.invalidArgument`
    ///   for a change that does not apply (pausing a release without a rollout, revoking
    ///   the release itself), the trust root's key rules; `.needsFlag` for an edit that would
    ///   lift a halt of the channel's `restriction.json` (only `resume` and `complete` lift
    ///   one by themselves) or stamp a time far beyond the newest, or pin an expired release,
    ///   each without its flag; `.unfollowablePin` for a pin to a revoked release.
    @discardableResult
    public static func apply(
        _ change: ManifestChange, releases: String, channel: String, signers: [any DocumentSigner], now: Date = Date(),
        expires: Date? = nil, flags: EditFlags = EditFlags()
    ) async throws -> Manifest {
        var flags = flags
        if change == .resume || change == .complete { flags.liftHalt = true }
        return try await rewrite(
            releases: releases, channel: channel, signers: signers, now: now, expires: expires, flags: flags, act: change.act,
            pausing: change == .pause
        ) { o, current, index, indexPath in
            try edit(&o, current: current, change: change, index: index, indexPath: indexPath, now: now, flags: flags)
        }
    }

    /// Re-signs the channel's current release with another apply policy (`clientctl rollout
    /// set --apply`), under the same rules as ``apply(_:releases:channel:signers:now:expires:)``.
    /// - Throws: `ArchivePublishingError` `.invalidArgument` for a deadline not after the
    ///   release's first publication, and what ``apply(_:releases:channel:signers:now:expires:)`` throws.
    @discardableResult
    package static func setApply(
        _ policy: ApplyPolicy, releases: String, channel: String, signers: [any DocumentSigner], now: Date = Date(),
        expires: Date? = nil, flags: EditFlags = EditFlags()
    ) async throws -> Manifest {
        try await rewrite(
            releases: releases, channel: channel, signers: signers, now: now, expires: expires, flags: flags, act: "rollout set --apply",
            pausing: false
        ) { o, current, _, _ in
            if let deadline = policy.deadline, deadline <= now {
                throw ArchivePublishingError(
                    .invalidArgument, "the apply deadline \(RFC3339.format(deadline)) is not after now (\(RFC3339.format(now)))")
            }
            o["apply"] = policy.jsonValue
        }
    }

    private static func rewrite(
        releases: String, channel: String, signers: [any DocumentSigner], now: Date, expires: Date?, flags: EditFlags, act: String,
        pausing: Bool, edit: (inout JSONObject, Manifest, ReleaseIndex, String) throws -> Void
    ) async throws -> Manifest {
        let folder = releases + "/" + channel
        let manifestPath = folder + "/manifest.json"
        let indexPath = folder + "/index.json"
        guard FileManager.default.fileExists(atPath: manifestPath) else {
            throw ArchivePublishingError(.notFound, "\(manifestPath) does not exist: publish a release on channel \(channel) first")
        }
        let lock = try DirectoryLock(folder)
        defer { lock.release() }
        try ReleaseRoots.requireThreshold(of: try ReleaseRoots.newest(inChannelFolder: folder), signers: signers)
        guard let data = FileManager.default.contents(atPath: manifestPath) else {
            throw ArchivePublishingError(.io, "cannot read \(manifestPath)")
        }
        let object = try StrictJSON.parseObject(data, limits: .manifest, source: manifestPath)
        let current = try Manifest.validate(object).mapError { $0.error(context: manifestPath) }.get()
        var index = try ReleaseIndex.parse(FileManager.default.contents(atPath: indexPath) ?? Data(), source: indexPath)
        // A halt is lifted only on purpose, and a clock far ahead never freezes the channel
        // (docs/guides/releasing.md#acts-that-need-a-flag): checked before anything is signed.
        try ChannelEditGuards.requireNoHalt(inFolder: folder, of: current, now: now, lifting: flags.liftHalt, pausing: pausing, act: act)
        try ChannelEditGuards.requirePlausible(
            now, newest: max(current.published, ChannelEditGuards.newestPublished(index) ?? current.published), channel: channel,
            allowed: flags.allowFarFuture)
        var edited = object
        try edit(&edited, current, index, indexPath)
        // Every signing names the cohort lists the channel holds now (docs/targeting.md#cohorts).
        try ChannelCohorts.refresh(&edited, folder: folder)
        let published = max(now, current.published.addingTimeInterval(1))
        edited["published"] = .string(RFC3339.format(published))
        // The version's first publication rides along every re-signing: the rollout guard
        // counts devices heard from before it, and an edit must not move that point.
        edited["firstPublished"] = .string(RFC3339.format(current.firstPublication))
        let rollout = try edited["rollout"].map(Rollout.parse)
        if let expires {
            edited["expires"] = .string(RFC3339.format(expires))
        } else if let rollout {
            edited["expires"] = .string(RFC3339.format(defaultExpiry(for: rollout, published: published)))
        } else {
            edited.removeValue(forKey: "expires")
        }
        let manifest = try await Manifest.sign(edited, by: signers)
        index.insert(manifest)
        do {
            try AtomicFile.write(Data(index.jsonBytes()), to: indexPath)
            try AtomicFile.write(Data(manifest.jsonBytes()), to: manifestPath)
        } catch let error as any ClientctlError {
            throw ArchivePublishingError(.io, error.message)
        }
        return manifest
    }

    /// Applies `change` to the manifest object `o` of `current`; `index` (at `indexPath`) is
    /// where the releases a change names beside it or in a pin are looked up.
    static func edit(
        _ o: inout JSONObject, current: Manifest, change: ManifestChange, index: ReleaseIndex, indexPath: String, now: Date = Date(),
        flags: EditFlags = EditFlags()
    ) throws {
        func withPause(_ paused: Bool) throws {
            guard var rollout = current.rollout else {
                throw ArchivePublishingError(.invalidArgument, "release \(current.version) has no staged rollout to \(paused ? "pause" : "resume")")
            }
            rollout.paused = paused
            o["rollout"] = rollout.jsonValue
        }
        switch change {
        case .setRollout(var rollout):
            // A new percent keeps the places the release already draws from, so raising
            // it only adds devices (docs/targeting.md#two-releases-at-once).
            if rollout.draw == nil, rollout.from == 0, let old = current.rollout {
                rollout.draw = old.draw
                rollout.from = old.from
            }
            guard rollout.from + rollout.highestPercent <= 100 else {
                throw ArchivePublishingError(
                    .invalidArgument,
                    "release \(current.version) draws its places from \(FeedNumber.text(rollout.from)) %: "
                        + "\(FeedNumber.text(rollout.highestPercent)) % more runs past 100 %")
            }
            o["rollout"] = rollout.jsonValue
        case .pause: try withPause(true)
        case .resume: try withPause(false)
        case .complete: o.removeValue(forKey: "rollout")
        case .setTarget(let target?): o["target"] = .string(target.description)
        case .setTarget(nil): o.removeValue(forKey: "target")
        case .setAlongside(let versions):
            try setAlongside(&o, current: current, versions: versions, index: index, indexPath: indexPath)
        case .pin(let target, let version):
            try pin(
                &o, current: current, target: target, version: version, index: index, indexPath: indexPath, now: now, allowExpired: flags.allowExpired
            )
        case .unpin(let target):
            try unpin(&o, current: current, target: target)
        case .refreshCohorts:
            break  // `rewrite` names the current cohort lists at every signing
        case .revoke(let versions):
            if versions.contains(current.version) {
                throw ArchivePublishingError(
                    .invalidArgument, "\(current.version) is the release the channel offers: publish a newer one that revokes it")
            }
            try ChannelEditGuards.requireNoPinTo(versions, in: current.pins)
            let all = (current.revoked + versions).map(\.description)
            var seen = Set<String>()
            o["revoked"] = .array(all.filter { seen.insert($0).inserted }.map { .string($0) })
        }
    }
}

import ApplyPolicy
import ArchivePublishing
import ClientFoundation
import DeviceTargeting
import FleetReports
import Foundation
import SignedManifest

/// What the guard signs when its rule says halt: a pure function of the restriction in force
/// for the release judged, the cohort judged and the clock, tested without I/O
/// (docs/fleet-reports.md#the-rollout-guard).
///
/// - Without a cohort (no `--label`) the halt pauses the whole release (`--revoke`: and
///   revokes it).
/// - For a cohort (`--label store=12 --label ring=beta`) the halt narrows the release away
///   from those devices alone: the restriction's target becomes the target in force (if any)
///   `and not (ring = beta and store = 12)`, so devices outside the cohort keep taking the
///   release and devices inside it stop (they keep what they run). Halts for two cohorts
///   compose, each narrowing further; nothing ever widens.
///
/// Either way every other field of the restriction in force is kept (its pause, percent
/// cap, revocations, apply policy, target): each restriction replaces the one before, so a
/// halt that dropped them would undo what a person or another guard held back. A release
/// already halted (paused; for a cohort, also a target that admits none of its devices) is
/// not signed again until less than ``renewal`` of it is left.
public enum GuardHalt {
    /// A restriction in force is signed again when less than this is left of it.
    public static let renewal: TimeInterval = 86_400

    /// What a halt keeps of the restriction in force for the release (`restriction.json`
    /// bound to the manifest judged, signed, not expired).
    public struct InForce: Sendable, Equatable {
        public var paused: Bool
        public var percent: Double?
        public var revoked: [Version]
        /// Its more patient apply policy.
        package var apply: ApplyPolicy?
        public var target: TargetExpression?
        public var expires: Date

        /// A restriction in force's fields.
        public init(_ restriction: Restriction) {
            self.init(
                paused: restriction.paused, percent: restriction.percent, revoked: restriction.revoked, target: restriction.target,
                expires: restriction.expires)
            apply = restriction.apply
        }

        /// Fields as given (tests).
        public init(paused: Bool = false, percent: Double? = nil, revoked: [Version] = [], target: TargetExpression? = nil, expires: Date) {
            self.paused = paused
            self.percent = percent
            self.revoked = revoked
            self.target = target
            self.expires = expires
        }
    }

    /// What to do.
    public enum Plan: Sendable, Equatable {
        /// Nothing to sign: the restriction in force halts it already and holds long enough.
        case alreadyHalted
        /// Sign this restriction (it replaces the one in force).
        case sign(RestrictionRequest)
    }

    /// Whether the restriction in force halts the release for `cohort`: it pauses the
    /// release, or (for a cohort) its target admits none of the cohort's devices
    /// (``DeviceTargeting/TargetExpression/admitsNone(labelled:)``), whoever narrowed it.
    public static func halts(_ inForce: InForce, cohort: LabelFilter) -> Bool {
        if inForce.paused { return true }
        guard !cohort.isEmpty, let target = inForce.target else { return false }
        return target.admitsNone(labelled: cohort.labels)
    }

    /// The target that leaves `cohort` out of what `inForce` (nil: the release's own
    /// target) admits: `target and not (k1 = v1 and k2 = v2)`, or `target` itself when it
    /// leaves the cohort out already.
    /// - Throws: ``GuardError`` `.tooLarge` when the result exceeds the target language's
    ///   bounds (``DeviceTargeting/TargetExpression``: 4,096 bytes, 16 levels, 1,000 values).
    public static func narrowed(_ target: TargetExpression?, leavingOut cohort: LabelFilter, release: Version) throws -> TargetExpression {
        let exclusion: TargetExpression
        do {
            exclusion = try TargetExpression.excluding(labels: cohort.labels)
        } catch let error as DeviceTargetingError {
            throw GuardError(.tooLarge, "cannot leave out the devices labelled '\(cohort)': \(error.message)")
        }
        guard let target else { return exclusion }
        if target.admitsNone(labelled: cohort.labels) { return target }
        let combined = TargetExpression.and(target, exclusion)
        do {
            // The bounds are the parser's: the canonical text must read back.
            return try TargetExpression(parsing: combined.description)
        } catch let error as DeviceTargetingError {
            throw GuardError(
                .tooLarge,
                "release \(release)'s restriction cannot also leave out the devices labelled '\(cohort)': its target in force "
                    + "(\(target.description.utf8.count) bytes) and '\(exclusion)' together exceed "
                    + "a target's bounds (\(error.message)); nothing signed: halt the whole release (rollout guard without --label, "
                    + "or rollout restrict --pause) or have the release role re-sign it")
        }
    }

    /// The plan for a halt of `release` for `cohort` (empty: the whole release).
    /// - Parameters:
    ///   - inForce: the restriction in force for the manifest judged (nil: none).
    ///   - releaseExpires: the manifest's expiry: a restriction never outlives it, so one
    ///     that reaches it is not renewed.
    ///   - revoke: also revoke the release (only without a cohort: a revocation is for
    ///     every device).
    ///   - now: the time of signing.
    /// - Throws: ``GuardError`` `.tooLarge` (see ``narrowed(_:leavingOut:release:)``).
    public static func plan(
        release: Version, releaseExpires: Date?, inForce: InForce?, cohort: LabelFilter, revoke: Bool, now: Date
    ) throws -> Plan {
        if let inForce, halts(inForce, cohort: cohort), !revoke || inForce.revoked.contains(release),
            inForce.expires.timeIntervalSince(now) > renewal || releaseExpires.map({ inForce.expires >= $0 }) == true
        {
            return .alreadyHalted
        }
        var revoked = inForce?.revoked ?? []
        if revoke && !revoked.contains(release) { revoked.append(release) }
        var request = RestrictionRequest(
            pause: cohort.isEmpty || inForce?.paused == true, percent: inForce?.percent, revoke: revoked, release: release)
        request.apply = inForce?.apply
        // A paused release is halted for every cohort already: its target stays as it is.
        let narrow = !cohort.isEmpty && inForce?.paused != true
        request.target = narrow ? try narrowed(inForce?.target, leavingOut: cohort, release: release) : inForce?.target
        return .sign(request)
    }
}

import ApplyPolicy
import ClientFoundation
import DeviceTargeting
import Foundation
import ReleaseSigning
import SignedManifest
import StrictJSON

/// What a restriction of the channel's current release asks for (`clientctl rollout restrict`).
public struct RestrictionRequest: Sendable, Equatable {
    /// No device takes the release while it holds.
    public var pause: Bool
    /// The highest percent of devices that may take the release.
    public var percent: Double?
    /// Versions devices must leave (the release's own allowed).
    public var revoke: [Version]
    /// How long it holds; nil: ``ChannelRestrictor/defaultLifetime``, shortened to the
    /// manifest's own expiry.
    public var lifetime: TimeInterval?
    /// Restrict only while the channel's release is this version: a guard that judged
    /// one release's figures must not pause another published meanwhile. nil: whatever
    /// the manifest holds when the lock is taken.
    public var release: Version?
    /// A more patient apply policy for the release (it may only make devices wait longer).
    package var apply: ApplyPolicy?
    /// A narrower target: devices take the release only where both this and the
    /// release's own target admit them (docs/targeting.md).
    public var target: TargetExpression?
    /// Sign only while `restriction.json` is still what this request was made from: two
    /// guards of one channel (one cohort each) never drop what the other signed. nil:
    /// whatever is there is replaced.
    package var basis: RestrictionBasis?

    public init(
        pause: Bool = false, percent: Double? = nil, revoke: [Version] = [], lifetime: TimeInterval? = nil, release: Version? = nil
    ) {
        self.pause = pause
        self.percent = percent
        self.revoke = revoke
        self.lifetime = lifetime
        self.release = release
    }
}

/// What `restriction.json` held when a request was made from it (``RestrictionRequest/basis``).
package enum RestrictionBasis: Sendable, Equatable {
    /// There was none.
    case none
    /// The SHA-256 (hex) of its bytes.
    case sha256(String)

    /// The basis of `bytes`, a file's contents (nil: there is no file).
    package init(_ bytes: Data?) {
        self = bytes.map { .sha256(Digest.hex(.sha256, of: $0)) } ?? .none
    }
}

/// Writes `<releases>/<channel>/restriction.json` for the channel's current manifest,
/// signed by the trust root's `rollout` role (docs/formats.md#restrictions), atomically and
/// under the channel's publishing lock. It replaces any earlier restriction: each one
/// states everything the rollout role holds back now.
public enum ChannelRestrictor {
    /// How long a restriction holds unless told: long enough for a person to look, short
    /// enough that a stolen rollout key must keep signing to keep a fleet back.
    public static let defaultLifetime: TimeInterval = 7 * 86_400

    /// Checks that `signers` are enough rollout keys of the newest trust root in `folder`,
    /// and returns that root.
    /// - Throws: `ArchivePublishingError` `.notFound` without a trust root with a rollout
    ///   role, `.untrustedKey` for a key that is not one of its rollout keys,
    ///   `.thresholdNotMet` for fewer than its threshold.
    @discardableResult
    static func requireRolloutSigners(_ signers: [any DocumentSigner], inChannelFolder folder: String) throws -> TrustRoot {
        guard let root = try ReleaseRoots.newest(inChannelFolder: folder), let role = root.rollout else {
            throw ArchivePublishingError(
                .notFound,
                "\(folder)/root/ has no trust root with a rollout role: add one (clientctl root init --rollout-key, root add-key --role rollout)")
        }
        let ids = Set(signers.map(\.publicKey.keyId))
        if let stranger = ids.sorted().first(where: { !role.keyIds.contains($0) }) {
            throw ArchivePublishingError(
                .untrustedKey, "key \(stranger) is not a rollout key of trust root \(root.version) (\(role.keyIds.joined(separator: ", ")))")
        }
        guard ids.count >= role.threshold else {
            throw ArchivePublishingError(
                .thresholdNotMet, "trust root \(root.version) needs \(role.threshold) rollout keys; \(ids.count) given (repeat --key)")
        }
        return root
    }

    /// Signs and writes the restriction and returns it.
    /// - Throws: `ArchivePublishingError` `.notFound` without a manifest or without a
    ///   trust root with a `rollout` role, `.untrustedKey`/`.thresholdNotMet` for signers
    ///   that are not enough rollout keys, `.invalidArgument` for a request that restricts
    ///   nothing or asks for more than the manifest, `.contended` when the release is no
    ///   longer ``RestrictionRequest/release`` or `restriction.json` no longer what the
    ///   request was made from (its `basis`); a signer's own errors.
    @discardableResult
    public static func restrict(
        _ request: RestrictionRequest, releases: String, channel: String, signers: [any DocumentSigner], now: Date = Date()
    ) async throws -> Restriction {
        let folder = releases + "/" + channel
        let manifestPath = folder + "/manifest.json"
        guard FileManager.default.fileExists(atPath: manifestPath) else {
            throw ArchivePublishingError(.notFound, "\(manifestPath) does not exist: publish a release on channel \(channel) first")
        }
        guard request.pause || request.percent != nil || !request.revoke.isEmpty || request.apply != nil || request.target != nil else {
            throw ArchivePublishingError(
                .invalidArgument, "a restriction needs --pause, --percent, --revoke, --apply or --target: this one restricts nothing")
        }
        let lock = try DirectoryLock(folder)
        defer { lock.release() }
        try requireRolloutSigners(signers, inChannelFolder: folder)
        guard let data = FileManager.default.contents(atPath: manifestPath) else {
            throw ArchivePublishingError(.io, "cannot read \(manifestPath)")
        }
        let object = try StrictJSON.parseObject(data, limits: .manifest, source: manifestPath)
        let manifest = try Manifest.validate(object).mapError { $0.error(context: manifestPath) }.get()
        if let release = request.release, release != manifest.version {
            throw ArchivePublishingError(
                .contended,
                "channel \(channel)'s release is now \(manifest.version), not \(release) whose figures were judged: nothing signed")
        }
        if let basis = request.basis, RestrictionBasis(FileManager.default.contents(atPath: folder + "/restriction.json")) != basis {
            throw ArchivePublishingError(.contended, "\(folder)/restriction.json changed since it was read: nothing signed")
        }
        var expires = now.addingTimeInterval(request.lifetime ?? defaultLifetime)
        if request.lifetime == nil, let limit = manifest.expires { expires = min(expires, limit) }
        guard expires > now else {
            throw ArchivePublishingError(
                .invalidArgument,
                "release \(manifest.version)'s manifest expired at \(manifest.expires.map(RFC3339.format) ?? "-"): nothing to restrict")
        }
        // A device answers a cohort test from the file the release's manifest names, and
        // reads a cohort it does not name as false: refuse what would silently hold everyone.
        if let name = request.target?.cohorts.first(where: { manifest.cohort(named: $0) == nil }) {
            throw ArchivePublishingError(
                .invalidArgument,
                "--target asks about the cohort '\(name)', which release \(manifest.version) does not name: "
                    + "a restriction can only ask about the cohorts the release's own targets ask about")
        }
        var draft = RestrictionDraft(
            for: manifest, issued: now, expires: expires, percent: request.percent, paused: request.pause, revoked: request.revoke)
        draft.apply = request.apply
        draft.target = request.target
        let restriction: Restriction
        do {
            restriction = try await draft.sign(by: signers, source: folder + "/restriction.json")
        } catch let error as ReleaseSigningError where error.code == .restrictionRefused {
            throw ArchivePublishingError(.invalidArgument, error.message)
        }
        do {
            try AtomicFile.write(Data(restriction.jsonBytes()), to: folder + "/restriction.json")
        } catch let error as any ClientctlError {
            throw ArchivePublishingError(.io, error.message)
        }
        return restriction
    }
}

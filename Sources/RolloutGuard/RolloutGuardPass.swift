import ArchivePublishing
import ClientFoundation
import FleetReports
import Foundation
import ReleaseSigning
import SignedManifest
import StrictJSON

/// One pass of the rollout guard (docs/fleet-reports.md#the-rollout-guard): read the
/// channel folder, ask the fleet, decide with ``RolloutGuardRule``, halt (a restriction
/// signed by the rollout role) and hand over to `afterHalt` (a push) when the rule says so.
/// Nothing is written before the fleet answered. The fleet and the clock are injected;
/// `clientctl rollout guard` is a thin adapter (its options, its loop, its output).
public struct RolloutGuardPass {
    /// The release folder root and the channel in it.
    public var releases: String
    public var channel: String
    /// Where the figures come from.
    public var fleet: any GuardFleet
    /// The rollout role's signers.
    public var signers: [any DocumentSigner]
    public var options: RolloutGuardRule.Options
    /// When halting, also revoke the version.
    public var revoke: Bool
    /// Devices not admitted and first heard from after it do not count (default: the
    /// rollout's start, or the version's first publication).
    public var historyBefore: Date?
    /// Run after a halt (or when already halted): `--push`; its one line is the outcome's `pushed`.
    public var afterHalt: (@Sendable () async throws -> String)?
    /// The wall clock (a restriction's `issued`, when one in force is renewed).
    public var now: @Sendable () -> Date

    /// A restriction that pauses the release is signed again when less than this is left.
    public static let renewal: TimeInterval = 86_400

    public init(
        releases: String, channel: String, fleet: any GuardFleet, signers: [any DocumentSigner], options: RolloutGuardRule.Options,
        revoke: Bool = false, historyBefore: Date? = nil, afterHalt: (@Sendable () async throws -> String)? = nil,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.releases = releases
        self.channel = channel
        self.fleet = fleet
        self.signers = signers
        self.options = options
        self.revoke = revoke
        self.historyBefore = historyBefore
        self.afterHalt = afterHalt
        self.now = now
    }

    var folder: String { releases + "/" + channel }

    /// The current manifest (validated; the guard signs nothing of it).
    /// - Throws: ``GuardError`` `.notFound` without one; its parse errors (65).
    func manifest() throws -> Manifest {
        let path = folder + "/manifest.json"
        guard let data = FileManager.default.contents(atPath: path) else {
            throw GuardError(.notFound, "\(path) does not exist: publish a release on channel \(channel) first")
        }
        let object = try StrictJSON.parseObject(data, limits: .manifest, source: path)
        return try Manifest.validate(object).mapError { $0.error(context: path) }.get()
    }

    /// Every version the channel published: its `index.json` entries and its manifest's.
    func published(current: Manifest) throws -> Set<Version> {
        let path = folder + "/index.json"
        var versions: Set<Version> = [current.version]
        guard let data = FileManager.default.contents(atPath: path) else { return versions }
        let index = try ReleaseIndex.parse(data, source: path)
        for entry in index.releases {
            if let text = entry["version"]?.stringValue, let v = Version(text) { versions.insert(v) }
        }
        return versions
    }

    /// The restriction in force for `manifest` as devices would judge it, or nil (none,
    /// another manifest's, expired, or one devices would refuse: then it is replaced).
    func restrictionInForce(for manifest: Manifest, now: Date) -> Restriction? {
        let path = folder + "/restriction.json"
        guard let data = FileManager.default.contents(atPath: path), let root = try? ReleaseRoots.newest(inChannelFolder: folder),
            case .inForce(let r)? = try? Restriction.check(data, for: manifest, root: root, now: now, source: path)
        else { return nil }
        return r
    }

    /// The guard's window on the reports (docs/fleet-reports.md#the-rollout-guard): devices
    /// not admitted count only when heard from before the release's rollout began
    /// (`--history-before`, else the rollout's start or the version's first publication,
    /// whichever is earlier, and no later than a halt of this version: a re-signing never
    /// moves it); after a person resumed a rollout
    /// the guard halted (the manifest re-signed after the halt's restriction), only reports
    /// received since the resume count, so the same figures do not halt it again.
    func window(for manifest: Manifest) -> (trustedBefore: Date, since: Date?) {
        var began = [manifest.firstPublication] + (manifest.rollout?.start.map { [$0] } ?? [])
        var since: Date?
        if let data = FileManager.default.contents(atPath: folder + "/restriction.json"),
            let halt = try? Restriction.parse(data, source: folder + "/restriction.json"), halt.version == manifest.version, halt.paused
        {
            began.append(halt.issued)
            if !halt.restricts(manifest), manifest.published > halt.issued { since = manifest.published }
        }
        return (historyBefore ?? began.min() ?? manifest.firstPublication, since)
    }

    /// One pass: what it found and did.
    public func run() async throws -> GuardOutcome {
        let manifest = try manifest()
        let published = try published(current: manifest)
        let (trustedBefore, since) = window(for: manifest)
        var versions = [manifest.version.description]
        if options.baseline, let previous = published.filter({ $0 < manifest.version }).max() { versions.append(previous.description) }
        let figures = try await fleet.figures(
            GuardQuery(app: manifest.app, channel: manifest.channel, versions: versions, trustedBefore: trustedBefore, since: since))
        let decision = RolloutGuardRule.decide(figures: figures, version: manifest.version, published: published, options: options)
        var outcome = GuardOutcome(app: manifest.app, channel: channel, action: .hold, decision: decision)
        guard decision.verdict == .halt else { return outcome }

        let now = Date(timeIntervalSince1970: floor(self.now().timeIntervalSince1970))
        let existing = restrictionInForce(for: manifest, now: now)
        if let existing, existing.paused, !revoke || existing.revoked.contains(manifest.version),
            existing.expires.timeIntervalSince(now) > Self.renewal || manifest.expires.map({ existing.expires >= $0 }) == true
        {
            outcome.action = .alreadyHalted
            outcome.restriction = existing
        } else {
            // Keep what an earlier restriction of this manifest held back (a person's cap
            // or revocations): each restriction replaces the previous one.
            var revoked = existing?.revoked ?? []
            if revoke && !revoked.contains(manifest.version) { revoked.append(manifest.version) }
            outcome.restriction = try await ChannelRestrictor.restrict(
                RestrictionRequest(pause: true, percent: existing?.percent, revoke: revoked, release: manifest.version), releases: releases,
                channel: channel,
                signers: signers, now: now)
            outcome.action = .halted
        }
        if let afterHalt { outcome.pushed = try await afterHalt() }
        return outcome
    }
}

import ArchivePublishing
import ClientFoundation
import FleetReports
import Foundation
import ReleaseSigning
import SignedManifest
import StrictJSON

/// One pass of the rollout guard (docs/fleet-reports.md#the-rollout-guard): read the
/// channel folder, ask the fleet (for one cohort's figures with ``cohort``), decide with
/// ``RolloutGuardRule``, halt (a restriction signed by the rollout role, planned by
/// ``GuardHalt``: a pause, or for a cohort a narrower target) and hand over to `afterHalt`
/// (a push) when the rule says so.
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
    /// When halting, also revoke the version (for every device: not with a ``cohort``).
    public var revoke: Bool
    /// The devices judged: those whose latest labels include these; empty: every device.
    /// A halt then narrows the release away from them instead of pausing it.
    public var cohort: LabelFilter
    /// Devices not admitted and first heard from after it do not count (default: the
    /// rollout's start, or the version's first publication).
    public var historyBefore: Date?
    /// Run after a halt (or when already halted): `--push`; its one line is the outcome's `pushed`.
    public var afterHalt: (@Sendable () async throws -> String)?
    /// The wall clock (a restriction's `issued`, when one in force is renewed).
    public var now: @Sendable () -> Date

    /// A restriction that halts the release is signed again when less than this is left.
    public static let renewal: TimeInterval = GuardHalt.renewal

    /// How often a halt is planned again when another process replaced `restriction.json`
    /// between its reading and its signing (another guard of the channel, a person).
    static let attempts = 3

    public init(
        releases: String, channel: String, fleet: any GuardFleet, signers: [any DocumentSigner], options: RolloutGuardRule.Options,
        revoke: Bool = false, cohort: LabelFilter = LabelFilter(), historyBefore: Date? = nil,
        afterHalt: (@Sendable () async throws -> String)? = nil, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.releases = releases
        self.channel = channel
        self.fleet = fleet
        self.signers = signers
        self.options = options
        self.revoke = revoke
        self.cohort = cohort
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

    /// The restriction in force for `manifest` as devices would judge it in `data` (the
    /// bytes of `restriction.json`), or nil (none, another manifest's, expired, or one
    /// devices would refuse: then it is replaced).
    func restrictionInForce(_ data: Data?, for manifest: Manifest, now: Date) -> Restriction? {
        let path = folder + "/restriction.json"
        guard let data, let root = try? ReleaseRoots.newest(inChannelFolder: folder),
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
    /// received since the resume count, so the same figures do not halt it again. A halt is
    /// a restriction of this version that pauses it or, for the ``cohort`` judged, whose
    /// target admits none of the cohort's devices (``GuardHalt/halts(_:cohort:)``): a halt
    /// of another cohort leaves this cohort's window as it was.
    func window(for manifest: Manifest) -> (trustedBefore: Date, since: Date?) {
        var began = [manifest.firstPublication] + (manifest.rollout?.start.map { [$0] } ?? [])
        var since: Date?
        if let data = FileManager.default.contents(atPath: folder + "/restriction.json"),
            let halt = try? Restriction.parse(data, source: folder + "/restriction.json"), halt.version == manifest.version,
            GuardHalt.halts(GuardHalt.InForce(halt), cohort: cohort)
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
        if options.baseline || options.maxErrorIncrease != nil, let previous = published.filter({ $0 < manifest.version }).max() {
            versions.append(previous.description)
        }
        let figures = try await fleet.figures(
            GuardQuery(
                app: manifest.app, channel: manifest.channel, versions: versions, trustedBefore: trustedBefore, since: since,
                labels: cohort))
        let decision = RolloutGuardRule.decide(figures: figures, version: manifest.version, published: published, options: options)
        var outcome = GuardOutcome(app: manifest.app, channel: channel, action: .hold, decision: decision, cohort: cohort)
        guard decision.verdict == .halt else { return outcome }

        let now = Date(timeIntervalSince1970: floor(self.now().timeIntervalSince1970))
        (outcome.action, outcome.restriction) = try await halt(manifest, now: now)
        if let afterHalt { outcome.pushed = try await afterHalt() }
        return outcome
    }

    /// Halts `manifest`'s release as ``GuardHalt`` plans from the restriction in force,
    /// keeping what it held back. The restriction is signed only while `restriction.json`
    /// is still the one the plan was made from: when another process replaced it meanwhile
    /// (a guard of another cohort, a person), the plan is made again from the new one, so
    /// neither drops what the other signed.
    func halt(_ manifest: Manifest, now: Date) async throws -> (GuardOutcome.Action, Restriction?) {
        let path = folder + "/restriction.json"
        var attempt = 0
        while true {
            attempt += 1
            let data = FileManager.default.contents(atPath: path)
            let existing = restrictionInForce(data, for: manifest, now: now)
            let plan = try GuardHalt.plan(
                release: manifest.version, releaseExpires: manifest.expires, inForce: existing.map(GuardHalt.InForce.init), cohort: cohort,
                revoke: revoke, now: now)
            guard case .sign(var request) = plan else { return (.alreadyHalted, existing) }
            request.basis = RestrictionBasis(data)
            do {
                let signed = try await ChannelRestrictor.restrict(request, releases: releases, channel: channel, signers: signers, now: now)
                return (.halted, signed)
            } catch let error as ArchivePublishingError where error.code == .contended {
                let replaced = RestrictionBasis(FileManager.default.contents(atPath: path)) != request.basis
                guard replaced && attempt < Self.attempts else { throw error }
            }
        }
    }
}

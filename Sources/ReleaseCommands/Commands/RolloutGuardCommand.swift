import ArchivePublishing
import ArgumentParser
import ClientFoundation
import ClientUpdater
import CommandSupport
import FleetReports
import Foundation
import SignedManifest
import StrictJSON
import Synchronization

/// `clientctl rollout guard CHANNEL`: halts the channel's release when the fleet's reports
/// say it fails, with the rollout role's key (docs/fleet-reports.md#the-rollout-guard).
struct RolloutGuardCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "guard",
        abstract: "Halt the channel's release when devices roll it back (rollout role's key).",
        discussion: """
            Reads OUT/CHANNEL/manifest.json (the app and the version being rolled out), \
            asks the collector for that version's figures only (GET /v1/guard) and decides. \
            Only devices the collector admitted count; under open admission only those it \
            heard from before the release's rollout began (--history-before), so ids invented \
            after a release never count; after a person resumes a rollout the guard halted, \
            only reports received since the resume count. The failure rate is the distinct devices that rolled the version back \
            over those that started a trial of it. It halts only when at least \
            --min-devices devices tried it and the 95 % Wilson lower bound of that rate is \
            above --max-failure-rate (with --baseline: above it plus the previous published \
            version's upper bound), so one device or a handful never halts a rollout. \
            Reports of versions the channel never published are ignored and counted.

            Halting writes OUT/CHANNEL/restriction.json atomically, signed by the trust \
            root's rollout role (as rollout restrict --pause; with --revoke devices on the \
            version also leave it), keeping what an earlier restriction of this manifest \
            held back. A release whose restriction already pauses it is not signed again \
            (until less than a day of it is left). --push uploads the channel afterwards, \
            as push does (same credentials, --endpoint, --region, --max-age).

            Prints one line per pass naming the version, the counts and the rule that \
            decided (--json: one JSON object per line). Exit status: 0 it holds (nothing \
            to do), 3 the release is halted (now or already), 69 the collector is \
            unreachable or answers 5xx/429 (nothing is written), 78 its read token refused, \
            and the statuses of rollout restrict and push. --every DURATION repeats the \
            pass (seconds, or with s, m, h or d; 1s to 1d) until SIGTERM or SIGINT, which \
            end it with 0 between passes; a pass that fails for a while (69, 75) is \
            reported and the next one tried.

            Examples:
              clientctl rollout guard stable --out releases --key rollout.pem \\
                --collector http://127.0.0.1:9400/ --token-file read.token
              clientctl rollout guard stable --out releases --key rollout.pem \\
                --collector https://reports.example.com/ --token-file read.token \\
                --max-failure-rate 0.05 --min-devices 50 --baseline --revoke \\
                --push s3://cdn-origin/notes --every 15m
            """
    )

    @Argument(help: ArgumentHelp("The release channel, e.g. stable.", valueName: "CHANNEL"))
    var channel: String

    @Option(name: .long, help: ArgumentHelp("Release folder root (as given to publish --out).", valueName: "RELEASES"))
    var out: String

    @Option(help: ArgumentHelp("The collector's base URL.", valueName: "URL"))
    var collector: String

    @Option(name: .customLong("token-file"), help: ArgumentHelp("A file holding the collector's read token.", valueName: "FILE"))
    var tokenFile: String

    @OptionGroup var signing: SigningOptions

    @Option(
        name: .customLong("max-failure-rate"),
        help: ArgumentHelp("The failure rate a release may have: a fraction (0.1) or a percent (10%).", valueName: "P"))
    var maxFailureRate: FailureRateArgument = FailureRateArgument(value: 0.1)

    @Option(name: .customLong("min-devices"), help: ArgumentHelp("Devices that must have tried the release before anything halts.", valueName: "N"))
    var minDevices = 20

    @Flag(name: .long, help: "Allow the previous published version's failure rate on top of --max-failure-rate.")
    var baseline = false

    @Flag(name: .long, help: "When halting, also revoke the version: devices on it leave it.")
    var revoke = false

    @Option(name: .long, help: ArgumentHelp("After halting, push the channel to s3://BUCKET/PREFIX as push does.", valueName: "S3-URL"))
    var push: String?

    @OptionGroup var store: S3StoreOptions

    @Option(
        name: .customLong("history-before"),
        help: ArgumentHelp(
            "Under open admission, count only devices the collector heard from before this time (default: the rollout's start).",
            valueName: "TIME"))
    var historyBefore: String?

    @Flag(name: .long, help: "One pass, then exit (the default).")
    var once = false

    @Option(name: .long, help: ArgumentHelp("Repeat the pass this often until SIGTERM or SIGINT: 15m, 1h.", valueName: "DURATION"))
    var every: String?

    @OptionGroup var output: OutputOptions

    /// The shortest and longest `--every`.
    static let everyRange: ClosedRange<Int64> = 1...86_400
    /// A restriction that pauses the release is signed again when less than this is left.
    static let renewal: TimeInterval = 86_400

    func validate() throws {
        guard (1...1_000_000).contains(minDevices) else { throw ValidationError("--min-devices must be 1 to 1000000, not \(minDevices)") }
        if once && every != nil { throw ValidationError("--once and --every cannot be used together") }
        if let every, !Self.everyRange.contains(RolloutArgument.seconds(every) ?? 0) {
            throw ValidationError("--every \(every) is not a duration from 1s to 1d like 30s, 15m or 1h")
        }
        if push == nil && (store.endpoint != nil || store.region != nil) { throw ValidationError("--endpoint and --region go with --push") }
    }

    func run() async throws {
        try await runReportingErrors {
            let guardian = RolloutGuardPass(
                releases: out, channel: channel, collector: try Self.collectorURL(collector), token: try FleetQuery.token(file: tokenFile),
                signers: try signing.signers(),
                options: RolloutGuardRule.Options(maxFailureRate: maxFailureRate.value, minDevices: minDevices, baseline: baseline),
                revoke: revoke, push: try push.map { try store.push(to: $0) }, pushDestination: push ?? "",
                historyBefore: try historyBefore.map { text in
                    guard let date = RFC3339.parse(text) else {
                        throw CommandError(.invalidArgument, "--history-before \(text): not an RFC 3339 time like 2026-12-01T00:00:00Z")
                    }
                    return date
                })
            guard let every, let seconds = RolloutArgument.seconds(every) else {
                let outcome = try await guardian.run()
                show(outcome)
                if outcome.halted { throw ExitCode(OutcomeStatus.halted.exitStatus) }
                return
            }
            try await loop(guardian, every: Duration.seconds(seconds))
        }
    }

    /// `--every`: passes until SIGTERM or SIGINT, which end the wait between passes (a pass
    /// under way, bounded by the collector's and the signer's time limits, finishes first).
    func loop(_ guardian: RolloutGuardPass, every interval: Duration) async throws {
        let stop = StopRequest()
        let sources = [SIGTERM, SIGINT].map { signalNumber in
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { stop.request() }
            source.resume()
            return source
        }
        defer { for source in sources { source.cancel() } }
        while !stop.requested {
            let started = ContinuousClock.now
            do {
                show(try await guardian.run())
            } catch let error as any ClientctlError where error.kind == .unavailable || error.kind == .tempFail {
                // The collector, a signer or the store down for a while: the next pass may succeed.
                Console.err("clientctl: \(FlagNames.message(for: error))\n")
            }
            while !stop.requested && ContinuousClock.now < started + interval {
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    func show(_ outcome: RolloutGuardPass.Outcome) {
        if output.json {
            Console.out(outcome.jsonLine())
        } else {
            Console.out(Data((outcome.line + "\n").utf8))
        }
    }

    static func collectorURL(_ text: String) throws -> URL {
        guard let url = URL(string: text) else { throw CommandError(.invalidArgument, "--collector \(text): not a URL") }
        return url
    }
}

/// `--max-failure-rate`: a fraction from 0 to 1 (`0.1`), or a percent (`10%`).
struct FailureRateArgument: ExpressibleByArgument, Sendable {
    var value: Double

    init(value: Double) { self.value = value }

    init?(argument: String) {
        let percent = argument.hasSuffix("%")
        guard let n = Double(percent ? String(argument.dropLast()) : argument), n.isFinite else { return nil }
        let value = percent ? n / 100 : n
        guard (0...1).contains(value) else { return nil }
        self.value = value
    }

    var defaultValueDescription: String { "\(value)" }
}

/// A stop asked for by a signal handler, read by the loop between passes.
final class StopRequest: Sendable {
    private let flag = Mutex(false)
    func request() { flag.withLock { $0 = true } }
    var requested: Bool { flag.withLock { $0 } }
}

/// One pass of the guard: read the folder, ask the collector, decide, halt and push when
/// the rule says so. Nothing is written before the collector answered.
struct RolloutGuardPass {
    var releases: String
    var channel: String
    var collector: URL
    var token: String
    var signers: [any DocumentSigner]
    var options: RolloutGuardRule.Options
    var revoke: Bool
    var push: ReleasePush?
    var pushDestination: String
    /// `--history-before`: under open admission, devices first heard from after it do not count.
    var historyBefore: Date?

    /// What a pass found and did.
    struct Outcome: Sendable {
        enum Action: String, Sendable, Codable {
            case hold
            case halted
            case alreadyHalted = "already-halted"
        }
        var app: String
        var channel: String
        var action: Action
        var decision: RolloutGuardRule.Decision
        /// The restriction in force after the pass, when halted.
        var restriction: Restriction?
        /// Push's one-line report, with --push.
        var pushed: String?

        var halted: Bool { action != .hold }

        /// The one line: the version, the counts, the rule, what was done.
        var line: String {
            let verb: String
            switch action {
            case .hold: verb = "holds"
            case .halted: verb = "halted"
            case .alreadyHalted: verb = "already halted"
            }
            var text = "\(app) \(decision.version) on \(channel): \(verb): \(decision.details)"
            if let restriction {
                text += "; restriction.json pauses it"
                if !restriction.revoked.isEmpty { text += " and revokes \(restriction.revoked.map(\.description).joined(separator: ", "))" }
                text += " until \(RFC3339.format(restriction.expires))"
                if action == .halted { text += " (\(SigningOptions.signedBy(restriction.signatures)))" }
            }
            if let pushed { text += "; " + pushed }
            return text
        }

        /// The `--json` object, on one line.
        func jsonLine() -> Data {
            struct Shape: Encodable {
                var app: String
                var channel: String
                var version: String
                var action: Action
                var verdict: RolloutGuardRule.Verdict
                var rule: RolloutGuardRule.Rule
                var failed: Int
                var trials: Int
                var rate: Double?
                var lowerBound: Double?
                var limit: Double
                var minDevices: Int
                var baseline: RolloutGuardRule.Baseline?
                var ignored: [String]
                var ignoredVersions: Int
                var restriction: RestrictionShape?
                var pushed: String?
                var trust: String?
                var trustedBefore: String?
                var since: String?
                var untrusted: Int
            }
            struct RestrictionShape: Encodable {
                var paused: Bool
                var revoked: [String]
                var expires: String
                var keyIds: [String]
            }
            let d = decision
            let shape = Shape(
                app: app, channel: channel, version: d.version, action: action, verdict: d.verdict, rule: d.rule, failed: d.failed,
                trials: d.trials, rate: d.rate, lowerBound: d.lowerBound, limit: d.limit, minDevices: d.minDevices, baseline: d.baseline,
                ignored: d.ignored, ignoredVersions: d.ignored.count,
                restriction: restriction.map {
                    RestrictionShape(
                        paused: $0.paused, revoked: $0.revoked.map(\.description), expires: RFC3339.format($0.expires),
                        keyIds: $0.signatures.map(\.keyId))
                }, pushed: pushed, trust: d.trust, trustedBefore: d.trustedBefore.map(RFC3339.format), since: d.since.map(RFC3339.format),
                untrusted: d.untrusted)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            let data = (try? encoder.encode(shape)) ?? Data("{}".utf8)
            return data + Data("\n".utf8)
        }
    }

    var folder: String { releases + "/" + channel }

    /// The current manifest (validated; the guard signs nothing of it).
    /// - Throws: ``CommandError`` `.notFound` without one; its parse errors (65).
    func manifest() throws -> Manifest {
        let path = folder + "/manifest.json"
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CommandError(.notFound, "\(path) does not exist: publish a release on channel \(channel) first")
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

    /// The guard's window on the reports (docs/fleet-reports.md#the-rollout-guard): under
    /// open admission only devices heard from before the release's rollout began count
    /// (`--history-before`, else the rollout's start or the release's publication, whichever
    /// is earlier, and no later than a halt of this version); after a person resumed a rollout
    /// the guard halted (the manifest re-signed after the halt's restriction), only reports
    /// received since the resume count, so the same figures do not halt it again.
    func window(for manifest: Manifest) -> (trustedBefore: Date, since: Date?) {
        var began = [manifest.published] + (manifest.rollout?.start.map { [$0] } ?? [])
        var since: Date?
        if let data = FileManager.default.contents(atPath: folder + "/restriction.json"),
            let halt = try? Restriction.parse(data, source: folder + "/restriction.json"), halt.version == manifest.version, halt.paused
        {
            began.append(halt.issued)
            if !halt.restricts(manifest), manifest.published > halt.issued { since = manifest.published }
        }
        return (historyBefore ?? began.min() ?? manifest.published, since)
    }

    static func millis(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded(.down)) }

    func run() async throws -> Outcome {
        let manifest = try manifest()
        let published = try published(current: manifest)
        let (trustedBefore, since) = window(for: manifest)
        var versions = [manifest.version.description]
        if options.baseline, let previous = published.filter({ $0 < manifest.version }).max() { versions.append(previous.description) }
        var query = [URLQueryItem(name: "app", value: manifest.app), URLQueryItem(name: "channel", value: manifest.channel)]
        query += versions.map { URLQueryItem(name: "version", value: $0) }
        query.append(URLQueryItem(name: "trusted-before", value: String(Self.millis(trustedBefore))))
        if let since { query.append(URLQueryItem(name: "since", value: String(Self.millis(since)))) }
        let data = try await CollectorClient(collector: collector, token: token).get("v1/guard", query)
        let figures: GuardFigures
        do {
            figures = try CollectorClient.decoder().decode(GuardFigures.self, from: data)
        } catch {
            throw CommandError(.rejected, "GET v1/guard: the answer is not the guard's figures (\(error))")
        }
        let decision = RolloutGuardRule.decide(figures: figures, version: manifest.version, published: published, options: options)
        var outcome = Outcome(app: manifest.app, channel: channel, action: .hold, decision: decision)
        guard decision.verdict == .halt else { return outcome }

        let now = Date(timeIntervalSince1970: floor(Date().timeIntervalSince1970))
        let existing = restrictionInForce(for: manifest, now: now)
        if let existing, existing.paused, !revoke || existing.revoked.contains(manifest.version),
            existing.expires.timeIntervalSince(now) > RolloutGuardCommand.renewal || manifest.expires.map({ existing.expires >= $0 }) == true
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
        if let push {
            outcome.pushed = PushCommand.summary(try await push.push(folder: releases, channel: channel), destination: pushDestination)
        }
        return outcome
    }
}

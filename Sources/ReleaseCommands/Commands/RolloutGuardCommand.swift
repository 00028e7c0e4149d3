import ArchivePublishing
import ArgumentParser
import ClientFoundation
import CommandSupport
import FleetReports
import Foundation
import RolloutGuard
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

            --label KEY=VALUE (repeatable, at most 8) judges one cohort: only the figures of \
            the devices whose latest labels include every label given (GET /v1/guard?label=; \
            a collector before labels is refused, exit 65). A halt then narrows the release \
            away from that cohort instead of pausing it: the restriction's target becomes \
            its target in force and 'not (KEY = VALUE and …)', so devices outside the cohort \
            keep taking the release and devices in it keep what they run. Guards of two \
            cohorts compose, each narrowing further, never widening; a narrowed target over \
            a target's bounds is refused (65, nothing signed). --revoke is for every device \
            and cannot go with --label (64). Labels are what devices claim; only devices a \
            release's target admits can report its version.

            Halting writes OUT/CHANNEL/restriction.json atomically, signed by the trust \
            root's rollout role (as rollout restrict --pause; with --revoke devices on the \
            version also leave it), keeping what an earlier restriction of this manifest \
            held back (its pause, percent, revocations, apply policy and target). A release \
            whose restriction already halts it is not signed again (until less than a day \
            of it is left). The restriction binds the channel's newest manifest only: a \
            release offered beside it (alongside) is not guarded. --push uploads the \
            channel afterwards, as push does (same credentials, --endpoint, --region, \
            --max-age).

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
              clientctl rollout guard stable --out releases --key rollout.pem \\
                --collector http://127.0.0.1:9400/ --token-file read.token \\
                --label store=12 --every 15m
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

    @Option(
        name: .customLong("label"),
        help: ArgumentHelp(
            "Judge only devices whose latest labels include this one and halt the release for them alone (repeatable, at most 8).",
            valueName: "key=value"))
    var labels: [String] = []

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
            if revoke && !labels.isEmpty {
                throw CommandError(
                    .invalidArgument, "--revoke revokes the version for every device: it cannot go with --label (a halt for a cohort only narrows)")
            }
            let pusher = try push.map { try store.push(to: $0) }
            let (releases, channel, destination) = (out, self.channel, push ?? "")
            var afterHalt: (@Sendable () async throws -> String)?
            if let pusher {
                afterHalt = { PushCommand.summary(try await pusher.push(folder: releases, channel: channel), destination: destination) }
            }
            var trustedBefore: Date?
            if let historyBefore {
                guard let date = RFC3339.parse(historyBefore) else {
                    throw CommandError(.invalidArgument, "--history-before \(historyBefore): not an RFC 3339 time like 2026-12-01T00:00:00Z")
                }
                trustedBefore = date
            }
            let cohort = try FleetQuery.labelFilter(labels)
            let client = CollectorClient(collector: try Self.collectorURL(collector), token: try FleetQuery.token(file: tokenFile))
            let guardian = RolloutGuardPass(
                releases: out, channel: channel, fleet: CollectorGuardFleet(client: client), signers: try signing.signers(),
                options: RolloutGuardRule.Options(maxFailureRate: maxFailureRate.value, minDevices: minDevices, baseline: baseline),
                revoke: revoke, cohort: cohort, historyBefore: trustedBefore, afterHalt: afterHalt)
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

    func show(_ outcome: GuardOutcome) {
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

/// The collector's `GET /v1/guard` as the guard's fleet.
struct CollectorGuardFleet: GuardFleet {
    let client: CollectorClient

    /// - Throws: what ``CollectorClient/get(_:_:)`` throws; ``CommandError`` `.rejected`
    ///   (65) for an answer that is not the guard's figures, or not of the cohort asked for
    ///   (a collector before labels ignores `label`: its whole fleet must not pass for a cohort).
    func figures(_ query: GuardQuery) async throws -> GuardFigures {
        var items = [URLQueryItem(name: "app", value: query.app), URLQueryItem(name: "channel", value: query.channel)]
        items += query.versions.map { URLQueryItem(name: "version", value: $0) }
        items.append(URLQueryItem(name: "trusted-before", value: String(Self.millis(query.trustedBefore))))
        if let since = query.since { items.append(URLQueryItem(name: "since", value: String(Self.millis(since)))) }
        items += FleetQuery.labelItems(query.labels)
        let data = try await client.get("v1/guard", items)
        let figures: GuardFigures
        do {
            figures = try CollectorClient.decoder().decode(GuardFigures.self, from: data)
        } catch {
            throw CommandError(.rejected, "GET v1/guard: the answer is not the guard's figures (\(error))")
        }
        guard (figures.labels ?? [:]) == query.labels.labels else {
            let what = figures.labels.map { "the devices labelled '\(FleetQuery.oneLine(LabelFilter.text($0)))'" } ?? "every device"
            throw CommandError(
                .rejected,
                "GET v1/guard: the collector answered for \(what), not for --label \(query.labels.assignments.joined(separator: " --label ")) "
                    + "(a collector before labels ignores --label: upgrade it)")
        }
        return figures
    }

    static func millis(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded(.down)) }
}

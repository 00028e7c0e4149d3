import ArgumentParser
import ClientFoundation
import CommandSupport
import Foundation
import RolloutGuard
import StrictJSON

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

            --max-error-increase RATIO also judges errors after start (docs/page-errors.md): \
            each device's problems per hour of use (capped at 60), averaged over the devices \
            with 5 minutes of use. It halts when both the release and the previous published \
            version have --min-devices such devices and the release's 95 % lower bound is \
            above RATIO times the previous version's upper bound. Off by default: an app's \
            error rate is its own, and a release that reports more of its failures \
            (reportProblem) is not worse; turn it on once fleet status shows ERRORS/DEV-H for \
            a release or two.

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
              clientctl rollout guard stable --out releases --key rollout.pem \\
                --collector http://127.0.0.1:9400/ --token-file read.token \\
                --max-error-increase 2 --every 15m
            """
    )

    @Argument(help: ArgumentHelp("The release channel, e.g. stable.", valueName: "CHANNEL"))
    var channel: String

    @Option(name: .long, help: ArgumentHelp("Release folder root (as given to publish --out).", valueName: "RELEASES"))
    var out: String

    @OptionGroup var collector: GuardCollectorOptions

    @OptionGroup var signing: SigningOptions

    @OptionGroup var rule: GuardRuleOptions

    @Option(name: .long, help: ArgumentHelp("After halting, push the channel to s3://BUCKET/PREFIX as push does.", valueName: "S3-URL"))
    var push: String?

    @OptionGroup var store: S3StoreOptions

    @Option(
        name: .customLong("history-before"),
        help: ArgumentHelp(
            "Under open admission, count only devices the collector heard from before this time (default: the rollout's start).",
            valueName: "TIME"))
    var historyBefore: String?

    @OptionGroup var repeating: GuardRepeatOptions

    @OptionGroup var output: OutputOptions

    @OptionGroup var audit: AuditOptions

    func validate() throws {
        if push == nil && (store.endpoint != nil || store.region != nil) { throw ValidationError("--endpoint and --region go with --push") }
    }

    func run() async throws {
        try await runReportingErrors {
            let guardian = try pass()
            guard let interval = repeating.interval else {
                let outcome = try await guardian.run()
                show(outcome)
                if outcome.halted { throw ExitCode(OutcomeStatus.halted.exitStatus) }
                return
            }
            // Until SIGTERM or SIGINT; a pass that fails for a while is reported and the next one tried.
            let stop = GuardStop()
            try await stop.requested(by: [SIGTERM, SIGINT]) {
                try await guardian.repeating(every: interval, clock: ContinuousClock(), until: stop, passed: show) { error in
                    Console.err("clientctl: \(FlagNames.message(for: error))\n")
                }
            }
        }
    }

    /// The pass the flags ask for, on the collector's figures.
    func pass() throws -> RolloutGuardPass {
        try rule.checkRevoke()
        let (pusher, releases, channel, destination) = (try push.map { try store.push(to: $0) }, out, channel, push ?? "")
        var afterHalt: (@Sendable () async throws -> String)?
        if let pusher {
            afterHalt = { PushCommand.summary(try await pusher.push(folder: releases, channel: channel), destination: destination) }
        }
        let trustedBefore = try historyBefore.map { text in
            guard let date = RFC3339.parse(text) else {
                throw CommandError(.invalidArgument, "--history-before \(text): not an RFC 3339 time like 2026-12-01T00:00:00Z")
            }
            return date
        }
        let cohort = try rule.cohort()
        var fleet: any GuardFleet = try collector.fleet()
        if let audited = try GuardAudit(audit, signing: signing, releases: releases, channel: channel) {
            fleet = audited.watching(fleet)
            afterHalt = audited.afterHalt(then: afterHalt)
        }
        return RolloutGuardPass(
            releases: out, channel: channel, fleet: fleet, signers: try signing.signers(), options: rule.options, revoke: rule.revoke,
            cohort: cohort, historyBefore: trustedBefore, afterHalt: afterHalt)
    }

    func show(_ outcome: GuardOutcome) {
        Console.out(output.json ? outcome.jsonLine() : Data((outcome.line + "\n").utf8))
    }
}

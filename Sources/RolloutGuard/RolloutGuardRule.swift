import ClientFoundation
import FleetReports
import Foundation

/// The decision of `clientctl rollout guard`: does the fleet say that the release being
/// rolled out fails, so that the rollout role should halt it? A pure function of the
/// collector's ``FleetSummary`` and the release folder's versions, tested without I/O
/// (docs/fleet-reports.md#the-rollout-guard).
///
/// The failure rate of a version is devices that rolled it back over devices that started a
/// trial of it, both counted as distinct devices by the collector (10,000 rollbacks sent by
/// one device id count once). The rule halts only when at least ``Options/minDevices``
/// devices tried the version **and** the Wilson score interval's *lower* bound of that rate
/// (95 % by default) is above the limit: one failing device of one, or two of ten, is
/// not evidence that the release is bad; 12 of 40 is (the bound is 0.18, above 0.1). With
/// ``Options/baseline`` the limit is the maximum rate plus the upper bound of the previous
/// published version's rate on the channel, so a fleet that always rolls back a little
/// (flaky devices, power cuts) is judged against itself.
public enum RolloutGuardRule {
    /// What the rule is told besides the figures.
    public struct Options: Sendable, Equatable {
        /// The failure rate a release may have (0–1): 0.1 halts a release that rolls back
        /// on clearly more than one device in ten.
        public var maxFailureRate: Double
        /// Devices that must have started a trial before anything is halted.
        public var minDevices: Int
        /// Judge against the previous published version's rate plus ``maxFailureRate``.
        public var baseline: Bool
        /// The normal quantile of the bounds (1.96: a two-sided 95 % interval).
        public var z: Double
        /// Errors after start (docs/page-errors.md#the-guard): halt when the version's errors
        /// per device-hour are clearly above this factor times the previous published
        /// version's (`2`: more than twice). nil: errors are not judged (the default).
        public var maxErrorIncrease: Double?

        /// The defaults: 10 %, 20 devices, no baseline, z = 1.96, errors not judged.
        public init(
            maxFailureRate: Double = 0.1, minDevices: Int = 20, baseline: Bool = false, z: Double = 1.96, maxErrorIncrease: Double? = nil
        ) {
            self.maxFailureRate = maxFailureRate
            self.minDevices = minDevices
            self.baseline = baseline
            self.z = z
            self.maxErrorIncrease = maxErrorIncrease
        }
    }

    /// The rule that decided.
    public enum Rule: String, Sendable, Equatable, Codable {
        /// Fewer than `minDevices` devices started a trial: hold, whatever the rate.
        case minDevices = "min-devices"
        /// The lower bound compared with `maxFailureRate` alone.
        case maxFailureRate = "max-failure-rate"
        /// The lower bound compared with `maxFailureRate` plus the previous version's upper bound.
        case baseline
    }

    /// What the guard does.
    public enum Verdict: String, Sendable, Equatable, Codable {
        /// Nothing: the release goes on as the release role signed it.
        case hold
        /// Halt the rollout (the rollout role pauses the release).
        case halt
    }

    /// The previous published version's figures when `--baseline` asked for them.
    public struct Baseline: Sendable, Equatable, Codable {
        /// The version (nil: the channel published none below the release).
        public var version: String?
        /// Its devices that rolled it back.
        public var failed: Int
        /// Its devices that started a trial.
        public var trials: Int
        /// The Wilson upper bound of its rate (nil when it had no trial).
        public var upperBound: Double?
        /// Whether the limit used it (it had at least `minDevices` trials).
        public var used: Bool
    }

    /// The decision and every figure behind it.
    public struct Decision: Sendable, Equatable, Codable {
        public var verdict: Verdict
        /// The rule that decided.
        public var rule: Rule
        /// The version judged.
        public var version: String
        /// Distinct devices that rolled it back.
        public var failed: Int
        /// Distinct devices that started a trial of it.
        public var trials: Int
        /// `failed / trials` (nil without a trial).
        public var rate: Double?
        /// The Wilson lower bound of the rate (nil without a trial).
        public var lowerBound: Double?
        /// What the lower bound was compared with.
        public var limit: Double
        /// The options' minimum of devices.
        public var minDevices: Int
        /// With `--baseline`: the previous version's figures.
        public var baseline: Baseline?
        /// Versions in the summary the channel never published (SemVer ones; embedded seeds
        /// are not the channel's), ignored.
        public var ignored: [String]
        /// Whose reports counted, when the figures came from `GET /v1/guard`:
        /// `admitted-or-history` (admitted keys, and devices heard from before
        /// ``trustedBefore``); an older collector's `history` or `admitted`.
        public var trust: String?
        /// Under `history`: the time a device must have been heard from before.
        public var trustedBefore: Date?
        /// Only reports received after this counted (a person resumed the rollout).
        public var since: Date?
        /// Devices left out: neither admitted nor with a history.
        public var untrusted: Int = 0
        /// With `--max-error-increase`: the judgement of errors after start.
        public var errors: ErrorJudgement?

        /// One line naming the version, the counts and the rule that fired.
        public var summary: String { "\(version): \(details)" }

        /// The counts and the rule that fired.
        public var details: String {
            var line = "\(failed) of \(trials) device\(trials == 1 ? "" : "s") rolled it back"
            if let rate, let lowerBound {
                line += " (\(Self.percent(rate)); lower bound \(Self.percent(lowerBound)))"
            }
            // The rollbacks' own verdict: the errors' judgement may halt a release they hold.
            let rollbacksHalt = rule != .minDevices && (lowerBound ?? 0) > limit
            switch (rollbacksHalt ? Verdict.halt : .hold, rule) {
            case (_, .minDevices):
                line += "; min-devices: fewer than \(minDevices) trials, nothing halts"
            case (.halt, _):
                line += "; \(rule.rawValue): lower bound above \(Self.percent(limit))"
            case (.hold, _):
                line += "; \(rule.rawValue): lower bound not above \(Self.percent(limit))"
            }
            if let baseline {
                switch (baseline.version, baseline.used) {
                case (let v?, true):
                    line += " (baseline \(v): \(baseline.failed) of \(baseline.trials), upper bound \(Self.percent(baseline.upperBound ?? 0)))"
                case (let v?, false):
                    line += " (baseline \(v) has \(baseline.trials) trials, fewer than \(minDevices): max-failure-rate alone)"
                case (nil, _):
                    line += " (no earlier published version for a baseline: max-failure-rate alone)"
                }
            }
            line += "; \(ignored.count) unpublished version\(ignored.count == 1 ? "" : "s") ignored"
            switch trust {
            case GuardFigures.admittedOrHistory?:
                let before = trustedBefore.map { Self.time($0) } ?? "the rollout"
                line += "; counting admitted devices and devices heard from before \(before), \(untrusted) others left out"
            case "history"?:
                let before = trustedBefore.map { Self.time($0) } ?? "the rollout"
                line += "; counting devices heard from before \(before) (open admission), \(untrusted) newer left out"
            case "admitted"?:
                line += "; counting admitted devices"
            default: break
            }
            if let since { line += "; reports since the resume at \(Self.time(since))" }
            if let errors { line += "; " + errors.details }
            return line
        }

        /// A time as RFC 3339 in UTC, to the second.
        static func time(_ date: Date) -> String {
            let f = ISO8601DateFormatter()
            f.formatOptions = [.withInternetDateTime]
            return f.string(from: date)
        }

        /// `0.1807` → `18.1 %`.
        static func percent(_ x: Double) -> String {
            let tenths = (x * 1000).rounded() / 10
            return tenths == tenths.rounded() ? "\(Int(tenths)) %" : "\(tenths) %"
        }
    }

    /// Errors after start against the previous published version's (`--max-error-increase`).
    public struct ErrorJudgement: Sendable, Equatable, Codable {
        /// What it decided alone (the release halts when this or the rollbacks say halt).
        public var verdict: Verdict
        /// `max-error-increase`, or `min-devices` while either version has too few devices
        /// with 5 minutes of use (nothing halts on errors then).
        public var rule: String
        /// The factor allowed.
        public var maxIncrease: Double
        /// The version judged and its figures (nil: the collector sent none).
        public var figures: ErrorFigures?
        /// The bounds of its mean rate.
        public var lowerBound: Double?
        /// The previous published version and its figures.
        public var previous: String?
        public var previousFigures: ErrorFigures?
        public var previousUpperBound: Double?
        /// What the lower bound was compared with: the factor times the previous upper bound.
        public var limit: Double?

        /// `errors: 41.3/device-hour on 31 devices (lower bound 30.2) against 1.0.0's 0.4
        /// (upper bound 0.6): max-error-increase: above 2 × 0.6`.
        public var details: String {
            var line = "errors: "
            if let figures, let rate = figures.mean {
                line += "\(Self.rate(rate))/device-hour on \(figures.devices) device\(figures.devices == 1 ? "" : "s")"
                if let lowerBound { line += " (lower bound \(Self.rate(lowerBound)))" }
            } else {
                line += "none reported"
            }
            if let previous {
                if let p = previousFigures, let rate = p.mean {
                    line += " against \(previous)'s \(Self.rate(rate)) on \(p.devices)"
                    if let previousUpperBound { line += " (upper bound \(Self.rate(previousUpperBound)))" }
                } else {
                    line += " against \(previous)'s none reported"
                }
            } else {
                line += "; no earlier published version to compare with"
            }
            switch (verdict, rule, limit) {
            case (.halt, _, let limit?):
                line += "; max-error-increase: lower bound above \(Self.rate(maxIncrease)) × \(Self.rate(limit / maxIncrease))"
            case (.hold, "min-devices", _): line += "; errors need devices with 5 minutes of use on both versions, nothing halts"
            case (.hold, _, let limit?): line += "; max-error-increase: lower bound not above \(Self.rate(limit))"
            default: break
            }
            return line
        }

        /// `0.4137` → `0.414`; `41.37` → `41.4`.
        static func rate(_ x: Double) -> String {
            let digits = x >= 10 ? 1 : 3
            var text = String(format: "%.\(digits)f", x)
            while text.contains("."), text.hasSuffix("0") { text.removeLast() }
            if text.hasSuffix(".") { text.removeLast() }
            return text
        }
    }

    /// Judges errors after start: the version's mean rate's lower bound against `maxIncrease`
    /// times the previous version's upper bound, both with at least `minDevices` devices.
    public static func judgeErrors(
        version: Version, figures: ErrorFigures?, previous: Version?, previousFigures: ErrorFigures?, maxIncrease: Double, minDevices: Int,
        z: Double = 1.96
    ) -> ErrorJudgement {
        var judgement = ErrorJudgement(
            verdict: .hold, rule: "min-devices", maxIncrease: maxIncrease, figures: figures, lowerBound: figures?.bounds(z: z)?.lower,
            previous: previous?.description, previousFigures: previousFigures, previousUpperBound: previousFigures?.bounds(z: z)?.upper,
            limit: nil)
        guard let figures, let previousFigures, figures.devices >= minDevices, previousFigures.devices >= minDevices,
            let lower = judgement.lowerBound, let upper = judgement.previousUpperBound
        else { return judgement }
        judgement.rule = "max-error-increase"
        judgement.limit = maxIncrease * upper
        if lower > maxIncrease * upper { judgement.verdict = .halt }
        return judgement
    }

    /// The Wilson score interval of `failed` successes out of `trials` at quantile `z`
    /// (nil for no trials): better than the normal approximation near 0 and for small counts,
    /// and never outside 0…1.
    public static func wilson(failed: Int, trials: Int, z: Double = 1.96) -> (lower: Double, upper: Double)? {
        guard trials > 0 else { return nil }
        let n = Double(trials)
        let p = Double(min(max(failed, 0), trials)) / n
        let z2 = z * z
        let denominator = 1 + z2 / n
        let center = (p + z2 / (2 * n)) / denominator
        let half = z / denominator * (p * (1 - p) / n + z2 / (4 * n * n)).squareRoot()
        return (max(0, center - half), min(1, center + half))
    }

    /// A version's distinct failed and trial devices from the summary. The collector sends
    /// the rate, not the distinct rollback count: it is recovered from `failureRate × trials`.
    /// A device that rolled back counts as a trial even when its `trial-started` was lost.
    public static func counts(of entry: VersionSummary?) -> (failed: Int, trials: Int) {
        guard let entry else { return (0, 0) }
        let failed: Int
        if let rate = entry.failureRate, rate.isFinite, entry.trials > 0 {
            failed = Int((rate * Double(entry.trials)).rounded())
        } else {
            // No trial reported: the largest count of one reason is a floor of the distinct devices.
            failed = entry.rollbacks.values.max() ?? 0
        }
        return (max(0, failed), max(entry.trials, failed))
    }

    /// Decides for `version` (the channel's current manifest) given `summary` and the
    /// versions the channel `published` (its index and manifest).
    public static func decide(summary: FleetSummary, version: Version, published: Set<Version>, options: Options = Options()) -> Decision {
        let byVersion = Dictionary(summary.versions.map { ($0.version, $0) }, uniquingKeysWith: { a, _ in a })
        return decide(
            version: version, published: published, reported: summary.versions.map(\.version), options: options,
            counts: { v in counts(of: byVersion[v.description] ?? entry(matching: v, in: summary)) })
    }

    /// Decides for `version` on the collector's guard figures (`GET /v1/guard`, which counts
    /// only devices it trusts, a rollback without its trial as a trial).
    public static func decide(figures: GuardFigures, version: Version, published: Set<Version>, options: Options = Options()) -> Decision {
        var decision = decide(
            version: version, published: published, reported: figures.versions.map(\.version) + figures.reported, options: options,
            counts: { v in
                guard let entry = figures.versions.first(where: { $0.version == v.description || Version($0.version) == v }) else { return (0, 0) }
                return (entry.failed, max(entry.trials, entry.failed))
            })
        decision.trust = figures.trust
        decision.trustedBefore = figures.trustedBefore
        decision.since = figures.since
        decision.untrusted = figures.untrustedDevices
        if let maxIncrease = options.maxErrorIncrease {
            func errors(_ v: Version) -> ErrorFigures? {
                figures.versions.first(where: { $0.version == v.description || Version($0.version) == v })?.errors
            }
            let previous = published.filter { $0 < version }.max()
            let judgement = judgeErrors(
                version: version, figures: errors(version), previous: previous, previousFigures: previous.flatMap(errors),
                maxIncrease: maxIncrease, minDevices: options.minDevices, z: options.z)
            decision.errors = judgement
            if judgement.verdict == .halt { decision.verdict = .halt }
        }
        return decision
    }

    static func decide(
        version: Version, published: Set<Version>, reported: [String], options: Options, counts: (Version) -> (failed: Int, trials: Int)
    ) -> Decision {
        let known = published.union([version])
        var seen = Set<String>()
        let ignored = reported.compactMap { text -> String? in
            guard let v = Version(text), !known.contains(v), seen.insert(text).inserted else { return nil }
            return text
        }
        let (failed, trials) = counts(version)
        let bounds = wilson(failed: failed, trials: trials, z: options.z)
        var limit = options.maxFailureRate
        var rule = Rule.maxFailureRate
        var baseline: Baseline?
        if options.baseline {
            let previous = published.filter { $0 < version }.max()
            var b = Baseline(version: previous?.description, failed: 0, trials: 0, upperBound: nil, used: false)
            if let previous {
                (b.failed, b.trials) = counts(previous)
                b.upperBound = wilson(failed: b.failed, trials: b.trials, z: options.z)?.upper
                if b.trials >= options.minDevices, let upper = b.upperBound {
                    b.used = true
                    limit += upper
                    rule = .baseline
                }
            }
            baseline = b
        }
        var verdict = Verdict.hold
        if trials < options.minDevices {
            rule = .minDevices
        } else if let bounds, bounds.lower > limit {
            verdict = .halt
        }
        return Decision(
            verdict: verdict, rule: rule, version: version.description, failed: failed, trials: trials,
            rate: trials > 0 ? Double(failed) / Double(trials) : nil, lowerBound: bounds?.lower, limit: limit,
            minDevices: options.minDevices, baseline: baseline, ignored: ignored)
    }

    /// The summary's entry of `version` written otherwise (build metadata): SemVer equality.
    static func entry(matching version: Version, in summary: FleetSummary) -> VersionSummary? {
        summary.versions.first { Version($0.version) == version }
    }
}

import ClientFoundation
import FleetReports
import Foundation
import SignedManifest
import StrictJSON

/// What a pass of the guard found and did.
public struct GuardOutcome: Sendable {
    /// What the pass did.
    public enum Action: String, Sendable, Codable {
        case hold
        case halted
        case alreadyHalted = "already-halted"
    }
    public var app: String
    public var channel: String
    public var action: Action
    public var decision: RolloutGuardRule.Decision
    /// The restriction in force after the pass, when halted.
    public var restriction: Restriction?
    /// Push's one-line report, when the pass pushed the channel.
    public var pushed: String?
    /// The devices judged (`--label`); empty: every device.
    public var cohort = LabelFilter()

    /// Halted now or already: `rollout guard` exits 3.
    public var halted: Bool { action != .hold }

    /// The one line: the version (and the cohort judged), the counts, the rule, what was done.
    public var line: String {
        let verb: String
        switch action {
        case .hold: verb = "holds"
        case .halted: verb = "halted"
        case .alreadyHalted: verb = "already halted"
        }
        let devices = cohort.isEmpty ? "" : " (devices labelled \(cohort))"
        var text = "\(app) \(decision.version) on \(channel)\(devices): \(verb): \(decision.details)"
        if let restriction {
            if restriction.paused {
                text += "; restriction.json pauses it"
            } else {
                text += "; restriction.json narrows it to '\(restriction.target.map(\.description) ?? "")'"
            }
            if !restriction.revoked.isEmpty { text += " and revokes \(restriction.revoked.map(\.description).joined(separator: ", "))" }
            text += " until \(RFC3339.format(restriction.expires))"
            if action == .halted { text += " (\(Self.signedBy(restriction.signatures)))" }
        }
        if let pushed { text += "; " + pushed }
        return text
    }

    /// The `--json` object, on one line.
    public func jsonLine() -> Data {
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
            var labels: [String: String]?
            var restriction: RestrictionShape?
            var pushed: String?
            var trust: String?
            var trustedBefore: String?
            var since: String?
            var untrusted: Int
            var errors: RolloutGuardRule.ErrorJudgement?
        }
        struct RestrictionShape: Encodable {
            var paused: Bool
            var revoked: [String]
            var target: String?
            var expires: String
            var keyIds: [String]
        }
        let d = decision
        let shape = Shape(
            app: app, channel: channel, version: d.version, action: action, verdict: d.verdict, rule: d.rule, failed: d.failed,
            trials: d.trials, rate: d.rate, lowerBound: d.lowerBound, limit: d.limit, minDevices: d.minDevices, baseline: d.baseline,
            ignored: d.ignored, ignoredVersions: d.ignored.count, labels: cohort.isEmpty ? nil : cohort.labels,
            restriction: restriction.map {
                RestrictionShape(
                    paused: $0.paused, revoked: $0.revoked.map(\.description), target: $0.target?.description,
                    expires: RFC3339.format($0.expires), keyIds: $0.signatures.map(\.keyId))
            }, pushed: pushed, trust: d.trust, trustedBefore: d.trustedBefore.map(RFC3339.format), since: d.since.map(RFC3339.format),
            untrusted: d.untrusted, errors: d.errors)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(shape)) ?? Data("{}".utf8)
        return data + Data("\n".utf8)
    }

    /// The keys that signed a restriction, each once, in order.
    static func signedBy(_ signatures: [DocumentSignature]) -> String {
        var seen: Set<String> = []
        let ids = signatures.map(\.keyId).filter { seen.insert($0).inserted }
        return "signed by \(ids.count == 1 ? "key" : "keys") \(ids.joined(separator: ", "))"
    }
}

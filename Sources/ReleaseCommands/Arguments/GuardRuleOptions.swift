import ArgumentParser
import FleetReports
import RolloutGuard

/// `rollout guard`'s rule: how failing a release may be, how many devices must have tried
/// it, against what it is judged, what a halt does and which devices are judged
/// (``RolloutGuard/RolloutGuardRule``, docs/fleet-reports.md#the-rollout-guard).
struct GuardRuleOptions: ParsableArguments {
    @Option(
        name: .customLong("max-failure-rate"),
        help: ArgumentHelp("The failure rate a release may have: a fraction (0.1) or a percent (10%).", valueName: "P"))
    var maxFailureRate: FailureRateArgument = FailureRateArgument(value: 0.1)

    @Option(name: .customLong("min-devices"), help: ArgumentHelp("Devices that must have tried the release before anything halts.", valueName: "N"))
    var minDevices = 20

    @Flag(name: .long, help: "Allow the previous published version's failure rate on top of --max-failure-rate.")
    var baseline = false

    @Option(
        name: .customLong("max-error-increase"),
        help: ArgumentHelp(
            "Also halt when the release's errors after start per device-hour are clearly more than RATIO times the previous"
                + " published version's (2: twice; at least 1). Default: errors are not judged.",
            valueName: "RATIO"))
    var maxErrorIncrease: Double?

    @Flag(name: .long, help: "When halting, also revoke the version: devices on it leave it.")
    var revoke = false

    @Option(
        name: .customLong("label"),
        help: ArgumentHelp(
            "Judge only devices whose latest labels include this one and halt the release for them alone (repeatable, at most 8).",
            valueName: "key=value"))
    var labels: [String] = []

    func validate() throws {
        guard (1...1_000_000).contains(minDevices) else { throw ValidationError("--min-devices must be 1 to 1000000, not \(minDevices)") }
        if let ratio = maxErrorIncrease, !(ratio.isFinite && ratio >= 1 && ratio <= 1_000) {
            throw ValidationError(
                "--max-error-increase must be a factor from 1 to 1000 (2: halt above twice the previous release's errors per device-hour), not \(ratio)"
            )
        }
    }

    /// The rule's options.
    var options: RolloutGuardRule.Options {
        RolloutGuardRule.Options(maxFailureRate: maxFailureRate.value, minDevices: minDevices, baseline: baseline, maxErrorIncrease: maxErrorIncrease)
    }

    /// Refuses `--revoke` with `--label`: a revocation is for every device.
    /// - Throws: ``CommandError`` `.invalidArgument` (exit 64).
    func checkRevoke() throws {
        guard revoke && !labels.isEmpty else { return }
        throw CommandError(
            .invalidArgument, "--revoke revokes the version for every device: it cannot go with --label (a halt for a cohort only narrows)")
    }

    /// The devices judged (`--label`); empty: every device.
    /// - Throws: ``CommandError`` `.invalidArgument` (exit 64) for a label that does not parse.
    func cohort() throws -> LabelFilter { try FleetQuery.labelFilter(labels) }
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

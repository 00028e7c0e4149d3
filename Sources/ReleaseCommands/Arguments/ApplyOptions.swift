import ApplyPolicy
import ArgumentParser
import Foundation

/// `--apply MODE [--idle-seconds N] [--deadline DURATION|TIME] [--grace DURATION]`: when
/// devices switch to a release once staged, signed into its manifest (docs/apply-policies.md).
struct ApplyOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "When devices switch once staged: next-start, next-navigation, idle, window or now.", valueName: "MODE"))
    var apply: String?

    @Option(
        name: .customLong("idle-seconds"),
        help: ArgumentHelp("Seconds without user input that count as idle (1–86400; required by --apply idle).", valueName: "N"))
    var idleSeconds: Int?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Past this, switch at the next idle moment: a duration after the release (48h, 2d) or an RFC 3339 time.",
            valueName: "DURATION|TIME"))
    var deadline: String?

    @Option(
        name: .long,
        help: ArgumentHelp("After the deadline, switch at most this much later whatever holds (default 1h, at most 7d).", valueName: "DURATION"))
    var grace: String?

    /// True when any of the flags was given.
    var given: Bool { apply != nil || idleSeconds != nil || deadline != nil || grace != nil }

    /// The policy the flags describe for a release at `releasedAt`; nil when none was given.
    /// - Throws: ``CommandError`` `.invalidArgument` (exit 64) naming the refused value.
    func policy(releasedAt: Date) throws -> ApplyPolicy? {
        guard given else { return nil }
        guard let apply else {
            throw CommandError(.invalidArgument, "--idle-seconds, --deadline and --grace go with --apply MODE")
        }
        do {
            return try ApplyPolicy.make(mode: apply, idleSeconds: idleSeconds, deadline: deadline, grace: grace, releasedAt: releasedAt)
        } catch let error as ApplyPolicyError {
            throw CommandError(.invalidArgument, error.message)
        }
    }
}

import ArgumentParser

/// `rollout guard --once` / `--every DURATION`: one pass, or a pass every DURATION until
/// SIGTERM or SIGINT (``RolloutGuard/RolloutGuardPass/repeating(every:clock:until:passed:failed:)``).
struct GuardRepeatOptions: ParsableArguments {
    @Flag(name: .long, help: "One pass, then exit (the default).")
    var once = false

    @Option(name: .long, help: ArgumentHelp("Repeat the pass this often until SIGTERM or SIGINT: 15m, 1h.", valueName: "DURATION"))
    var every: String?

    /// The shortest and longest `--every`, in seconds.
    static let everyRange: ClosedRange<Int64> = 1...86_400

    func validate() throws {
        if once && every != nil { throw ValidationError("--once and --every cannot be used together") }
        if let every, !Self.everyRange.contains(RolloutArgument.seconds(every) ?? 0) {
            throw ValidationError("--every \(every) is not a duration from 1s to 1d like 30s, 15m or 1h")
        }
    }

    /// `--every`'s interval; nil: one pass.
    var interval: Duration? { every.flatMap(RolloutArgument.seconds).map { .seconds($0) } }
}

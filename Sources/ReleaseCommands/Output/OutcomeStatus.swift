/// Exit statuses that are not failures: the command did its job, and what it found is
/// something a script acts on (docs/reference/exit-codes.md#outcomes). They sit below
/// sysexits' 64, so no caller mistakes one for a failure's ``FailureKind`` status;
/// `Scripts/doc-examples` checks this table against that page.
enum OutcomeStatus: CaseIterable, Sendable {
    /// `rollout guard`: the release is halted (paused by the rollout role's restriction,
    /// now or on an earlier pass).
    case halted

    /// The process's exit status.
    var exitStatus: Int32 {
        switch self {
        case .halted: return 3
        }
    }
}

import ClientFoundation

/// The one place where failures become process exit statuses, following BSD
/// `sysexits(3)` (docs/reference/exit-codes.md), so scripts can tell a bad release (65) from a
/// network outage (69) from a busy device (75). The table itself is
/// `FailureKind.exitStatus`, shared with `clientctl-shell`.
extension FailureKind {
    /// The exit status of a command that failed this way.
    package var exitCode: Int32 { exitStatus }
}

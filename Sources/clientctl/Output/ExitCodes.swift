import ClientUpdater

/// The one place where failures become process exit statuses, following BSD
/// `sysexits(3)` (README "Exit codes"), so scripts can tell a bad release (65) from a
/// network outage (69) from a busy device (75).
extension FailureKind {
    /// The exit status of a command that failed this way.
    var exitCode: Int32 {
        switch self {
        case .usage: return 64  // EX_USAGE
        case .dataError: return 65  // EX_DATAERR
        case .noInput: return 66  // EX_NOINPUT
        case .unavailable: return 69  // EX_UNAVAILABLE
        case .software: return 70  // EX_SOFTWARE
        case .cannotCreate: return 73  // EX_CANTCREAT
        case .tempFail: return 75  // EX_TEMPFAIL
        case .config: return 78  // EX_CONFIG
        }
    }
}

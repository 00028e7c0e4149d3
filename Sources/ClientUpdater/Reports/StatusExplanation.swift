import ClientFoundation
import FleetReports
import Foundation

/// `clientctl status --explain`: why the device runs this version and not a newer one, one
/// line per reason, from what the last check recorded (`last-check.json`), `state.json`
/// and the report journal's recent reports. A pure function of those values.
///
/// The lines quote text from elsewhere (a feed server's or a channel's message), so each is
/// passed through `TerminalText.escaped` (ClientFoundation): no control character or bidi
/// override of it reaches the terminal (nor `--json`'s `explanation`).
package enum StatusExplanation {
    /// The lines, most important first: a trial or a pending version, then why the last
    /// check took nothing (up to date, the rollout's place, the shell, an expired manifest,
    /// a refusal, a failed download or check), then every blacklisted version and why.
    package static func lines(_ status: StatusReport, recent: [FleetReport]) -> [String] {
        var out: [String] = []
        if let trial = status.trial {
            out.append("on trial: \(trial.version) runs until its page reports startup complete (else it is rolled back)")
        }
        if let pending = status.pending {
            out.append("pending: \(pending) is installed and runs after a reload or the next start")
            if let apply = status.apply { out.append("takes over: \(apply)") }
        }
        if let note = status.channelNote { out.append("note: " + note) }
        out += lastCheckLines(status, recent: recent)
        for version in status.retry {
            let why = recent.last { $0.type == .rolledBack && $0.version == version }?.reason
            out.append("retry: \(version) failed its trial once\(why.map { " (\(describe($0)))" } ?? "") and gets one more")
        }
        for version in status.blacklist {
            let why = recent.last { $0.type == .blacklisted && $0.version == version }?.reason
            let text = why.map { "after a rollback (\(describe($0)))" } ?? "after failed trials or a revocation"
            out.append("blacklisted: \(version) is never tried again on this device, \(text)")
        }
        if out.isEmpty { out.append("no check yet: run `clientctl install` (or let serve check) to ask the feed") }
        return out.map { TerminalText.escaped($0) }
    }

    static func lastCheckLines(_ status: StatusReport, recent: [FleetReport]) -> [String] {
        guard let check = status.lastCheck else { return [] }
        // The reports of the last check: those recorded since it began (a check takes less
        // than a day; a report older than the check's record by more is another check's).
        let window = recent.filter { $0.time >= check.time.addingTimeInterval(-24 * 3600) }
        let refused = window.last { $0.type == .checkRefused }
        let downloadFailed = window.last { $0.type == .downloadFailed }
        let message = check.message
        switch check.result {
        case InstallResult.upToDate.rawValue:
            return ["up to date: " + strip(message, "up to date")]
        case InstallResult.installed.rawValue, InstallResult.staged.rawValue:
            return []  // pending says it
        case InstallResult.noCompatibleRelease.rawValue:
            return ["needs another shell: " + message + " (this shell is \(status.shellVersion))"]
        case InstallResult.stale.rawValue:
            return ["manifest expired or the clock is behind: " + message]
        case InstallResult.skipped.rawValue:
            let reason = refused?.reason ?? classify(message)
            switch reason {
            case .rollout:
                return ["rollout: " + message]
            case .target:
                return ["not for this device: " + message]
            case .blacklisted:
                return []  // the blacklist lines say it
            case .revoked:
                return ["revoked: " + message]
            default:
                return ["skipped: " + message]
            }
        case InstallResult.deferred.rawValue:
            return [message]  // "download deferred: why; may download from …"
        case "no-space":
            return ["disk full: " + message]
        default:
            if let failed = downloadFailed {
                let why = failed.reason.map(describe) ?? "failed"
                return ["the last download\(failed.version.map { " of \($0)" } ?? "") failed (\(why)): " + message]
            }
            if let refused, let reason = refused.reason {
                return ["refused (\(describe(reason))): " + message]
            }
            return ["the last check failed: " + message]
        }
    }

    /// The reason a skipped check's message names, when no report says it.
    ///
    /// A revocation first: the rollout role's restriction that revokes a release says so
    /// as "the rollout role's restriction of release X revokes Y", which names the rollout
    /// role too but is no rollout step. A blacklisting before both: its message may say
    /// why ("it is revoked"), and the blacklist lines explain it.
    static func classify(_ message: String) -> ReportReason {
        if message.contains("is blacklisted on this device") { return .blacklisted }
        if message.hasPrefix("not in the target") || message.hasPrefix("pinned to") { return .target }
        if message.contains("revoke") { return .revoked }
        if message.contains("rolling out") || message.contains("rollout") { return .rollout }
        if message.contains("blacklisted") { return .blacklisted }
        return .other
    }

    static func describe(_ reason: ReportReason) -> String {
        switch reason {
        case .timedOut: return "its page did not report startup complete in time"
        case .pageCrashed: return "its page's web process died"
        case .processDied: return "its process died during the trial"
        case .byHand: return "rolled back by hand"
        case .revoked: return "revoked by its channel"
        case .cannotOrganize: return "it cannot be laid out for serving"
        case .pageErrors: return "its page failed on most of its loads in its first hour"
        default: return reason.rawValue
        }
    }

    static func strip(_ message: String, _ prefix: String) -> String {
        guard message.hasPrefix(prefix) else { return message }
        let rest = message.dropFirst(prefix.count).drop { $0 == ":" || $0 == " " }
        return rest.isEmpty ? message : String(rest)
    }
}

import ClientFoundation
import ClientUpdater
import Foundation

/// Human-readable renderings of a ``StatusReport`` for `status` and `list`.
///
/// Every line goes through `TerminalText.escaped` (ClientFoundation): a status holds text from
/// elsewhere (a collector's error line as the last delivery failure, a server's message in
/// the last check), and a control character or bidi override in it must not reach the
/// terminal. Each line is one line: a newline in a value is shown as `\u{a}`.
enum StatusText {
    static func render(_ s: StatusReport) -> String {
        var lines = [
            "root:            \(s.root)",
            "app:             \(s.app) (\(s.channelKind)\(s.channel.map { ", channel \($0)" } ?? ""))",
            "shell:           \(s.shellVersion)",
            "device id:       \(s.deviceId ?? "-")",
            "device key:      \(s.deviceKey ?? "-")",
            "labels:          \((s.labels ?? [:]).isEmpty ? "none" : (s.labels ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", "))",
            "current:         \(s.current)",
            "pending:         \(s.pending ?? "-")",
            "last known good: \(s.lastKnownGood ?? "-")",
            "selected:        \(s.selected)",
        ]
        if let apply = s.apply { lines.insert("takes over:      \(apply)", at: 8) }
        if let source = s.currentSource { lines.insert("from:            \(source)", at: 7) }
        if s.rootChannel != nil || s.channelChoice != nil || (s.choosableChannels?.count ?? 0) > 1 {
            lines.insert("channel:         " + ChannelText.line(s), at: 2)
        }
        if let root = s.trustRoot {
            lines.append("trust root:      \(root == 0 ? "the --trust keys (no signed root yet)" : "root/\(root).json")")
        }
        if let trial = s.trial { lines.append("trial:           \(trial.version) since \(iso(trial.startedAt))") }
        if !s.blacklist.isEmpty { lines.append("blacklist:       \(s.blacklist.joined(separator: ", "))") }
        if !s.retry.isEmpty { lines.append("retry:           \(s.retry.joined(separator: ", "))") }
        if let check = s.lastCheck {
            lines.append("last check:      \(iso(check.time)) \(check.result): \(check.message)")
        } else {
            lines.append("last check:      never")
        }
        if let clock = s.clock {
            lines.append("clock:           \(clock.line)")
            // The last authenticated-time decision: who answered, agreed, was outvoted or
            // failed, the quorum and the interval (or why none); names escaped below.
            lines += clock.decisionLines
        }
        if let note = s.channelNote { lines.append("note:            \(note)") }
        if let free = s.freeBytes { lines.append("free space:      \(DiskSpace.megabytes(free)) on \(s.root)") }
        lines.append("installed:       \(s.installed.isEmpty ? "none" : s.installed.map(\.version).joined(separator: ", "))")
        if let reports = s.reports { lines.append("reports:         " + renderReports(reports)) }
        return lines.map { TerminalText.escaped($0) }.joined(separator: "\n")
    }

    /// `3 pending, 0 dropped; last delivery 2026-… ok` (or `failed: why`, or `never`); a
    /// hold for company shows after the count.
    static func renderReports(_ r: StatusReport.Reports) -> String {
        var text = "\(r.pending) pending"
        if let held = r.heldUntil { text += " (held until \(iso(held)) to go with the next report)" }
        text += ", \(r.dropped) dropped"
        if r.unreadable > 0 { text += ", \(r.unreadable) unreadable" }
        if let attempt = r.lastAttempt {
            if let failure = r.lastFailure {
                text += "; last delivery \(iso(attempt)) failed: \(failure)"
                if let ok = r.lastDelivered { text += " (last delivered \(iso(ok)))" }
            } else {
                text += "; last delivery \(iso(attempt)) ok"
            }
        } else {
            text += "; never delivered"
        }
        return text
    }

    static func renderList(_ s: StatusReport) -> String {
        guard !s.installed.isEmpty else { return "no installed versions (the embedded seed runs)" }
        return s.installed.map { e in
            var flags: [String] = []
            if e.current { flags.append("current") }
            if e.pending { flags.append("pending") }
            if e.lastKnownGood { flags.append("last-known-good") }
            if e.blacklisted { flags.append("blacklisted") }
            if e.retry { flags.append("retry") }
            if !e.compatible { flags.append("incompatible") }
            let range = e.minShell.map { "shell >= \($0)" + (e.maxShell.map { ", <= \($0)" } ?? "") } ?? ""
            return [e.version, range, flags.joined(separator: ",")].map { TerminalText.escaped($0) }.joined(separator: "\t")
        }.joined(separator: "\n")
    }

    static func iso(_ date: Date) -> String { ISO8601DateFormatter().string(from: date) }
}

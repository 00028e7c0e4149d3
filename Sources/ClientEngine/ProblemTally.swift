import ClientUpdater
import FleetReports
import Foundation

/// Counts a page's problems after its acknowledgement, per version and per period of use,
/// and says when to report them and when the version fails its first hour
/// (docs/page-errors.md). Pure: monotonic readings in, reports and decisions out; the
/// agent's `PageProblems` runs it on the injected clock and writes what it says.
///
/// - **Use** is the time from the version's first acknowledgement in this host until it
///   leaves the screen (a switch, a rollback) or the host stops.
/// - **Periods**: a `page-errors` report after the first 5 minutes of use, after 15, at the
///   end of the first hour, then every 6 hours of use, and one for what is left when the
///   version leaves the screen. A host that stops keeps its period (`Saved`) for its next
///   start, so restarts do not multiply reports.
/// - **Messages**: the first ``maxMessages`` distinct ones, each cut to ``maxMessageBytes``.
/// - **The first hour**: loads (acknowledgements) and loads that had a problem; when at
///   least ``minFirstHourLoads`` loads within the first hour of use had a problem on more
///   than half of them, ``Output/rollBack(_:)`` (once; the agent acts on it only when the
///   device allows it).
package struct ProblemTally: Sendable, Equatable {
    /// The ends of the first periods, in use: 5 minutes, 15 minutes, then 1 hour (so that
    /// the guard hears from a new release within minutes of its first devices).
    package static let firstPeriods: [Duration] = [.seconds(5 * 60), .seconds(15 * 60), .seconds(3600)]
    /// Every period after the first hour.
    package static let period: Duration = .seconds(6 * 3600)
    /// The window of the local rollback's rule.
    package static let firstHour: Duration = .seconds(3600)
    /// Loads the first hour needs before its rule judges.
    package static let minFirstHourLoads = 3
    /// Distinct messages kept per period.
    package static let maxMessages = 3
    /// Longest message kept, in UTF-8 bytes.
    package static let maxMessageBytes = 60

    /// What the tally asks for.
    package enum Output: Sendable, Equatable {
        /// Record this `page-errors` report.
        case report(ReportDraft)
        /// The version failed its first hour: roll it back when the device allows it.
        case rollBack(String)
    }

    /// The version counted and its period so far: what a stopping host keeps.
    package struct Saved: Sendable, Equatable, Codable {
        package var version: String
        /// Use before this period, in milliseconds (where the next period ends).
        package var usedBeforeMs: Int64
        /// Use in this period, in milliseconds.
        package var usedMs: Int64
        package var problems: Int64
        package var messages: [String]
        /// Loads of the first hour, and those with a problem.
        package var loads: Int
        package var failedLoads: Int
        /// The first hour's rule fired already.
        package var judged: Bool
    }

    private var saved: Saved?
    /// When the running stretch of use began (a monotonic reading), nil while not in use.
    private var since: Duration?
    /// The current load had a problem already.
    private var loadFailed = false

    /// - Parameter saved: what a stopped host kept; its messages are cut again by today's
    ///   rule (a file an older version wrote may hold characters it kept).
    package init(saved: Saved? = nil) {
        var saved = saved
        if let messages = saved?.messages {
            var kept: [String] = []
            for cut in messages.map(Self.cut) where !cut.isEmpty && !kept.contains(cut) && kept.count < Self.maxMessages { kept.append(cut) }
            saved?.messages = kept
        }
        self.saved = saved
    }

    /// The version counted, if any.
    package var version: String? { saved?.version }

    /// What a stopping host keeps, use up to `now` included.
    package func snapshot(at now: Duration) -> Saved? {
        guard var s = saved else { return nil }
        s.usedMs += Self.ms(running(at: now))
        return s
    }

    /// A page of `version` acknowledged its start: a load of the first hour, use running.
    /// Another version than the one counted leaves the screen first (its report).
    package mutating func acknowledged(_ version: String, at now: Duration) -> [Output] {
        var out: [Output] = []
        if saved?.version != version {
            out += left(at: now)
            saved = Saved(version: version, usedBeforeMs: 0, usedMs: 0, problems: 0, messages: [], loads: 0, failedLoads: 0, judged: false)
        }
        if since == nil { since = now }
        loadFailed = false
        if var s = saved, Self.ms(used(at: now)) < Self.ms(Self.firstHour) {
            s.loads += 1
            saved = s
        }
        return out + due(at: now)
    }

    /// `count` problems of the page of `version` (after its acknowledgement), with a few of
    /// their messages; a page of another version (an old tab) is not counted.
    package mutating func problems(_ count: Int64, messages: [String], version: String, at now: Duration) -> [Output] {
        guard count > 0, var s = saved, s.version == version else { return [] }
        s.problems = s.problems.addingReportingOverflow(count).overflow ? Int64.max : s.problems + count
        for message in messages {
            let cut = Self.cut(message)
            guard !cut.isEmpty, s.messages.count < Self.maxMessages, !s.messages.contains(cut) else { continue }
            s.messages.append(cut)
        }
        var out: [Output] = []
        if !loadFailed, Self.ms(used(at: now)) < Self.ms(Self.firstHour) {
            loadFailed = true
            s.failedLoads += 1
            if !s.judged, s.loads >= Self.minFirstHourLoads, s.failedLoads * 2 > s.loads {
                s.judged = true
                out.append(.rollBack(version))
            }
        }
        saved = s
        return out + due(at: now)
    }

    /// The reports due by `now` (a period of use ended).
    package mutating func due(at now: Duration) -> [Output] {
        guard let s = saved, since != nil else { return [] }
        let end = Self.periodEnd(after: s.usedBeforeMs)
        guard Self.ms(used(at: now)) >= end else { return [] }
        return flush(at: now)
    }

    /// When the next period ends, as a monotonic reading (nil while not in use).
    package func nextDue(at now: Duration) -> Duration? {
        guard let s = saved, since != nil else { return nil }
        let left = Self.periodEnd(after: s.usedBeforeMs) - Self.ms(used(at: now))
        return now + .milliseconds(max(0, left))
    }

    /// The version leaves the screen (a switch, a rollback): what is left of its period.
    package mutating func left(at now: Duration) -> [Output] {
        guard saved != nil else { return [] }
        let out = flush(at: now)
        saved = nil
        since = nil
        return out
    }

    /// The host stops: use ends; the period is kept (``snapshot(at:)``).
    package mutating func stop(at now: Duration) {
        guard var s = saved else { return }
        s.usedMs += Self.ms(running(at: now))
        saved = s
        since = nil
    }

    /// The period's report; the next period starts.
    private mutating func flush(at now: Duration) -> [Output] {
        guard var s = saved else { return [] }
        s.usedMs += Self.ms(running(at: now))
        if since != nil { since = now }
        defer {
            s.usedBeforeMs += s.usedMs
            s.usedMs = 0
            s.problems = 0
            s.messages = []
            saved = s
        }
        guard s.usedMs > 0 || s.problems > 0 else { return [] }
        var draft = ReportDraft(.pageErrors, running: s.version, version: s.version)
        draft.ms = s.usedMs
        draft.count = s.problems > 0 ? s.problems : nil
        if !s.messages.isEmpty { draft.detail = s.messages.joined(separator: " | ") }
        return [.report(draft)]
    }

    /// Use of the version so far: earlier periods, this one, the running stretch.
    private func used(at now: Duration) -> Duration {
        guard let s = saved else { return .zero }
        return .milliseconds(s.usedBeforeMs + s.usedMs) + running(at: now)
    }

    private func running(at now: Duration) -> Duration {
        guard let since, now > since else { return .zero }
        return now - since
    }

    /// Where the period after `usedBefore` milliseconds of use ends (milliseconds of use).
    static func periodEnd(after usedBefore: Int64) -> Int64 {
        if let first = firstPeriods.map(ms).first(where: { $0 > usedBefore }) { return first }
        return usedBefore + ms(period)
    }

    static func ms(_ d: Duration) -> Int64 {
        let (s, atto) = d.components
        return s * 1000 + atto / 1_000_000_000_000_000
    }

    /// A message as kept: one line, at most ``maxMessageBytes``; a character holding a scalar
    /// ``isReplaced(_:)`` names becomes a space.
    static func cut(_ text: String) -> String {
        var out = ""
        var used = 0
        for ch in text {
            let c: Character = ch.unicodeScalars.contains(where: isReplaced) ? " " : ch
            let n = String(c).utf8.count
            if used + n > maxMessageBytes { break }
            out.append(c)
            used += n
        }
        return out.trimmingCharacters(in: .whitespaces)
    }

    /// `text` with every character that holds a scalar ``isReplaced(_:)`` names as a space,
    /// uncut: a page's message as a host shows it (the shell's `pageErrors` event).
    package static func oneLine(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isReplaced) else { return text }
        return String(text.map { ch in ch.unicodeScalars.contains(where: isReplaced) ? " " : ch })
    }

    /// Whether a kept message shows `scalar` as a space: the control characters (Cc: C0,
    /// DEL, C1), the format characters (Cf: the bidi controls, zero-width characters, the
    /// byte order mark), and the line and paragraph separators (Zl U+2028, Zp U+2029), the
    /// scalars `Quoting` escapes. Each would break the one line or make it read otherwise
    /// than its bytes on a terminal (which `TerminalText` guards against too).
    static func isReplaced(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator: return true
        default: return false
        }
    }
}

import AuthenticatedTime
import ClientFoundation
import Foundation
import Logging
import StrictJSON
import Synchronization

/// The time a device decides by (docs/device-time.md): its wall clock, never below the
/// newest time it has verified (the floor: signed `published` and `issued` times, a quorum
/// of time servers, the program's own date), and corrected into the interval the time
/// servers vouch for when the root names some. clientctl never sets the system clock: it
/// decides by this.
///
/// Durations are not its business: they are measured on the monotonic clock
/// (`ContinuousClock`), which no wall-clock jump moves.
///
/// Asking the time servers is injected (``TimeServerQuery``): the engine passes the Roughtime
/// client (AuthenticatedTimeClient's `RoughtimeQuorum.query`), so this module, which the
/// release side's fleet client links too, holds no UDP client.
public final class DeviceClock: Sendable {
    /// Asks `servers` at once, each bounded by `timeout`, and returns the interval at least
    /// `quorum` of them vouch for (or throws why not): AuthenticatedTimeClient's
    /// `RoughtimeQuorum.query(_:quorum:timeout:)`, or a test's stand-in.
    public typealias TimeServerQuery =
        @Sendable (_ servers: [RoughtimeServer], _ quorum: Int, _ timeout: Duration) async throws -> AuthenticatedTime

    /// The root whose `time.json` keeps the floor; nil: kept in memory only.
    public let layout: RootLayout?
    let clocks: @Sendable () -> ClockReading
    let programDate: Date
    /// The time servers to ask (empty: none).
    public let servers: [RoughtimeServer]
    /// How many of ``servers`` must agree.
    public let quorum: Int
    /// Asks ``servers``; nil: this host has no client for them.
    let query: TimeServerQuery?
    let logger: Logger
    private let cached = Mutex<Cached>(Cached())

    private struct Cached {
        var record: TimeRecord?
        var stamp: FileStamp?
        /// Signed times verified by the check under way, kept until it ends (``settle(kept:)``).
        var witnessed: [(date: Date, source: String)] = []
    }

    /// A clock for a root, whose floor starts at ``ProgramDate/released``.
    /// - Parameters:
    ///   - layout: the root whose `time.json` keeps the floor (nil: in memory only).
    ///   - clocks: the wall and monotonic clocks read at one moment (injected for tests).
    ///   - servers: the time servers of the root's settings.
    ///   - quorum: how many of them must agree.
    ///   - query: what asks them (AuthenticatedTimeClient's `RoughtimeQuorum.query`); nil
    ///     with servers named: every ``authenticate(timeout:)`` fails saying so.
    ///   - logger: where the clock logs an answer outvoted or a record not written.
    public convenience init(
        layout: RootLayout?, clocks: @escaping @Sendable () -> ClockReading = { ClockReading.now() },
        servers: [RoughtimeServer] = [], quorum: Int = 1, query: TimeServerQuery? = nil, logger: Logger = Logger(label: "clientctl.engine")
    ) {
        self.init(
            layout: layout, clocks: clocks, programDate: ProgramDate.released, servers: servers, quorum: quorum, query: query, logger: logger)
    }

    /// A clock whose floor starts at `programDate` (tests).
    package init(
        layout: RootLayout?, clocks: @escaping @Sendable () -> ClockReading, programDate: Date, servers: [RoughtimeServer] = [],
        quorum: Int = 1, query: TimeServerQuery? = nil, logger: Logger = Logger(label: "clientctl.engine")
    ) {
        self.layout = layout
        self.clocks = clocks
        self.programDate = programDate
        self.servers = servers
        self.quorum = max(1, quorum)
        self.query = query
        self.logger = logger
    }

    /// The time to decide by now (expiry, replay, deadlines, windows, report times).
    public func now() -> Date { judge().trusted }

    /// What the clocks say now, for `status` and reports.
    public func status() -> ClockStatus {
        let record = current()
        let reading = clocks()
        // An interval that ends before the program's own date is none (ClockJudgement).
        let interval = record?.authenticated?.interval(at: reading).flatMap { $0.upperBound >= programDate ? $0 : nil }
        let floor = floor(of: record)
        let (trusted, verdict) = ClockJudgement.judge(wall: reading.wall, floor: floor.date, authenticated: interval, programDate: programDate)
        return ClockStatus(
            wall: reading.wall, trusted: trusted, floor: floor.date, floorSource: floor.source, verdict: verdict,
            authenticated: interval.map {
                ClockStatus.Interval(earliest: $0.lowerBound, latest: $0.upperBound, servers: record?.authenticated?.agreeing ?? [])
            },
            outvoted: record?.authenticated?.outvoted ?? [], authenticationFailure: record?.authenticationFailure,
            timeServers: servers.count, lastDecision: record.flatMap { $0.authenticationFailure == nil ? $0.authenticated?.tally : $0.undecided },
            lastDecisionTried: record?.authenticationTried)
    }

    private func judge() -> (trusted: Date, verdict: ClockVerdict) {
        let record = current()
        let reading = clocks()
        return ClockJudgement.judge(
            wall: reading.wall, floor: floor(of: record).date, authenticated: record?.authenticated?.interval(at: reading),
            programDate: programDate)
    }

    private func floor(of record: TimeRecord?) -> (date: Date, source: String) {
        if let record, record.floor > programDate { return (record.floor, record.floorSource) }
        return (programDate, "the release date of this clientctl")
    }

    /// Notes a signed time the check under way verified (`release 1.4.0 published`): it
    /// raises the floor when the check ends without a failure (``settle(kept:)``), so a check
    /// refused for any reason leaves the root exactly as it was.
    package func witnessed(_ date: Date, source: String) {
        cached.withLock { $0.witnessed.append((date, source)) }
    }

    /// The check under way ended: its verified times raise the floor when `kept`, else they go.
    package func settle(kept: Bool) {
        let noted = cached.withLock { c in
            defer { c.witnessed = [] }
            return c.witnessed
        }
        guard kept, let newest = noted.max(by: { $0.date < $1.date }) else { return }
        witness(newest.date, source: newest.source)
    }

    /// Raises the floor to `date` when it is later (never lowers it): `source` says what
    /// verified it (`release 1.4.0 published`). Only a time the device verified comes here,
    /// never the wall clock. A failure to persist is logged and the floor kept in memory.
    package func witness(_ date: Date, source: String) {
        let whole = Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))
        update { record in
            guard whole > record.floor else { return false }
            record.floor = whole
            record.floorSource = source
            return true
        }
    }

    /// Asks the time servers (when the root names some) and keeps their interval: the next
    /// decisions are corrected into it, and the floor rises to its earliest end. A failure
    /// (no quorum, no answer) is kept for `status` and returned; decisions then go on by the
    /// wall clock and the floor.
    /// - Returns: the failure line, or nil when the servers vouched for a time (or none is configured).
    @discardableResult
    public func authenticate(timeout: Duration = .seconds(3)) async -> String? {
        guard !servers.isEmpty else { return nil }
        let tried = clocks().wall
        do {
            guard let query else { throw NoTimeServerClient() }
            let answer = try await query(servers, min(quorum, servers.count), timeout)
            // No server makes the program's own release date untrue: an interval that ends
            // before it is a wrong answer, however many agree (docs/device-time.md#the-rule).
            if answer.latest < programDate {
                throw BeforeProgramDate(answer: answer, programDate: programDate)
            }
            update { record in
                record.authenticated = answer
                record.authenticationFailure = nil
                record.undecided = nil
                record.authenticationTried = tried
                let earliest = Date(timeIntervalSince1970: answer.earliest.timeIntervalSince1970.rounded(.down))
                if earliest > record.floor {
                    record.floor = earliest
                    record.floorSource = "time servers \(answer.agreeing.joined(separator: ", "))"
                }
                return true
            }
            for line in answer.outvoted { logger.info("\(line)") }
            return nil
        } catch {
            let line = (error as? any ClientctlError)?.message ?? "authenticated time: \(error)"
            update { record in
                record.authenticationFailure = line
                record.undecided = Self.tally(of: error)
                record.authenticationTried = tried
                return true
            }
            logger.info("\(line)")
            return line
        }
    }

    /// Records that `verdict` was reported; true when it was not the last one reported
    /// (a wrong clock is reported once per episode, and again once it changes).
    package func markReported(_ verdict: ClockVerdict) -> Bool {
        var changed = false
        update { record in
            // Never reported is as good as reported right: nothing to write for a right clock.
            guard record.reported ?? .trusted != verdict else { return false }
            changed = true
            record.reported = verdict
            return true
        }
        return changed
    }

    /// Changes the record under `time.lock` (re-read first: another process may have raised
    /// it), writing it when `change` says so. A change that would change nothing touches no
    /// file, not even the lock.
    private func update(_ change: (inout TimeRecord) -> Bool) {
        var probe = current() ?? TimeRecord(floor: programDate, floorSource: "the release date of this clientctl")
        guard change(&probe) else { return }
        guard let layout else {
            cached.withLock { c in
                var record = c.record ?? TimeRecord(floor: programDate, floorSource: "the release date of this clientctl")
                if change(&record) { c.record = record }
            }
            return
        }
        let lock = try? Flock.waiting(TimeRecord.lockPath(layout), .file, for: .seconds(2))
        defer { lock?.release() }
        var record = TimeRecord.read(layout) ?? TimeRecord(floor: programDate, floorSource: "the release date of this clientctl")
        guard change(&record) else { return }
        let notWritten = "\(TimeRecord.path(layout)) not written (the floor stays in memory)"
        if lock == nil {
            logger.info("\(notWritten): cannot lock \(TimeRecord.lockPath(layout)): \(String(cString: strerror(EWOULDBLOCK)))")
        } else {
            do { try record.write(layout) } catch { logger.info("\(notWritten): \(error)") }
        }
        cached.withLock { c in
            c.record = record
            c.stamp = FileStamp(TimeRecord.path(layout))
        }
    }

    /// The record: the cached one while the file is unchanged, else read again (another
    /// process may have raised the floor).
    private func current() -> TimeRecord? {
        guard let layout else { return cached.withLock { $0.record } }
        let stamp = FileStamp(TimeRecord.path(layout))
        return cached.withLock { c in
            if let stamp, stamp == c.stamp { return c.record }
            let fresh = TimeRecord.read(layout)
            // A record on disk older than one kept in memory (a write that failed) loses to it.
            if let kept = c.record, kept.floor > (fresh?.floor ?? .distantPast) {
                var merged = fresh ?? kept
                merged.floor = kept.floor
                merged.floorSource = kept.floorSource
                c.record = merged
            } else {
                c.record = fresh
            }
            c.stamp = stamp
            return c.record
        }
    }
}

extension DeviceClock {
    /// What a failed authentication decided, for `status`: the quorum's tally when the
    /// servers were asked (no quorum, or an interval before the program's date, which is
    /// not used), nil when they were not.
    static func tally(of error: any Error) -> RoughtimeTally? {
        if let early = error as? BeforeProgramDate, var tally = early.answer.tally {
            tally.undecided =
                "the interval ends before the release date of this clientctl (\(RFC3339.format(early.programDate))): not used"
            return tally
        }
        return (error as? AuthenticatedTimeError)?.underlying as? RoughtimeTally
    }
}

/// A clock with servers named but nothing to ask them with (a host that built its own
/// ``DeviceClock`` without a ``DeviceClock/TimeServerQuery``).
private struct NoTimeServerClient: Error, CustomStringConvertible {
    var description: String { "no time server client in this host (DeviceEngine.open passes one)" }
}

/// Time servers that agree on an interval before the program's own release date.
private struct BeforeProgramDate: Error, CustomStringConvertible {
    let answer: AuthenticatedTime
    let programDate: Date
    var description: String {
        "time servers \(answer.agreeing.joined(separator: ", ")) vouch for \(RFC3339.format(answer.earliest)) "
            + "to \(RFC3339.format(answer.latest)), before the release date of this clientctl (\(RFC3339.format(programDate))): not used"
    }
}

/// What identifies one version of a file without reading it: inode, size and change time.
package struct FileStamp: Equatable, Sendable {
    let inode: UInt64
    let size: Int64
    let seconds: Int
    let nanoseconds: Int

    package init?(_ path: String) {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        inode = UInt64(st.st_ino)
        size = Int64(st.st_size)
        seconds = Int(st.st_ctim.tv_sec)
        nanoseconds = Int(st.st_ctim.tv_nsec)
    }
}

/// What a device's clocks say, for `status --json` and the `clock:` line of `status`.
public struct ClockStatus: Codable, Sendable, Equatable {
    /// An interval the time servers vouched for, carried forward to now.
    public struct Interval: Codable, Sendable, Equatable {
        /// The true time was not before this.
        public var earliest: Date
        /// The true time was not after this.
        public var latest: Date
        /// The servers that agreed.
        public var servers: [String]
    }

    /// The wall clock.
    public var wall: Date
    /// What the device decides by.
    public var trusted: Date
    /// The newest time the device has verified.
    public var floor: Date
    /// What verified it (`release 1.0.1 published`).
    public var floorSource: String
    /// What the wall clock is.
    public var verdict: ClockVerdict
    /// The authenticated interval in force (nil: none configured, none yet, or from another boot).
    public var authenticated: Interval?
    /// Answers outvoted at the last authentication.
    public var outvoted: [String]
    /// Why the last authentication failed.
    public var authenticationFailure: String?
    /// How many time servers the root names.
    public var timeServers: Int
    /// The last authenticated-time decision in full (`lastDecision` in `--json`; nil: none
    /// made yet, or it failed before the servers were asked): the quorum, who answered,
    /// which overlapped, who agreed, was outvoted or failed and why, the interval decided
    /// (not carried forward) or why none was.
    package var lastDecision: RoughtimeTally?
    /// When it was made, by the wall clock of then.
    package var lastDecisionTried: Date?

    /// One line: what the wall clock is and what the device decides by.
    public var line: String {
        let wallText = RFC3339.format(wall)
        let trustedText = RFC3339.format(trusted)
        var text: String
        switch verdict {
        case .trusted:
            text = "trusted (\(wallText); floor \(RFC3339.format(floor)), \(floorSource))"
        case .behindFloor:
            text =
                "wrong: the wall clock reads \(wallText), behind the newest time this device has verified "
                + "(\(RFC3339.format(floor)), \(floorSource)); decisions use \(trustedText)"
        case .behindAuthenticated, .aheadOfAuthenticated:
            let side = verdict == .behindAuthenticated ? "behind" : "ahead of"
            text = "wrong: the wall clock reads \(wallText), \(side) the time servers' \(intervalText); decisions use \(trustedText)"
        case .floorAheadOfAuthenticated:
            text =
                "the newest signed time (\(RFC3339.format(floor)), \(floorSource)) is later than the time servers' "
                + "\(intervalText): a signer's clock ran ahead; decisions use \(trustedText)"
        }
        if verdict == .trusted, let authenticated {
            text += "; time servers vouch for \(RFC3339.format(authenticated.earliest)) to \(RFC3339.format(authenticated.latest))"
        }
        if let authenticationFailure { text += "; \(authenticationFailure)" }
        return text
    }

    /// The `time …:` lines of `status` for ``lastDecision``, server names as they are (the
    /// renderer escapes each line): `time quorum:`, `time answered:`, then `time agreed:`,
    /// `time outvoted:`, `time failed:` and `time interval:` for a decision, or
    /// `time overlapped:`, `time failed:` and `time undecided:` when none was made or used.
    /// None without a decision.
    package var decisionLines: [String] {
        guard let d = lastDecision else { return [] }
        func names(_ servers: [String]) -> String { servers.isEmpty ? "none" : servers.joined(separator: ", ") }
        func span(_ earliest: Date, _ latest: Date) -> String { "\(RFC3339.format(earliest)) to \(RFC3339.format(latest))" }
        func refusals(_ list: [RoughtimeTally.Refusal]) -> String {
            list.map { $0.server.isEmpty ? $0.reason : "\($0.server) (\($0.reason))" }.joined(separator: "; ")
        }
        let overlaps = d.overlaps.map { "\($0.servers.joined(separator: " and ")) share \(span($0.earliest, $0.latest))" }
        let tried = lastDecisionTried.map { ", asked \(RFC3339.format($0))" } ?? ""
        var lines = ["time quorum:     \(d.quorum) of \(d.asked) must agree\(tried)", "time answered:   \(names(d.answered.map(\.server)))"]
        if let why = d.undecided {
            if d.overlaps.isEmpty {
                lines.append("time overlapped: none")
            } else {
                lines.append("time overlapped: " + overlaps.joined(separator: "; "))
            }
            if !d.outvoted.isEmpty { lines.append("time outvoted:   " + refusals(d.outvoted)) }
            if !d.failed.isEmpty { lines.append("time failed:     " + refusals(d.failed)) }
            if let earliest = d.earliest, let latest = d.latest {
                lines.append("time undecided:  \(span(earliest, latest)) decided, \(why)")
            } else {
                lines.append("time undecided:  no interval: \(why)")
            }
            return lines
        }
        var agreed = "time agreed:     \(names(d.agreed))"
        if d.overlaps.count > 1 {
            // Sets that share a server: each set's shared part, and which agreeing servers do
            // not overlap each other (one of them is wrong; the interval spans both parts).
            let apart = d.agreed.enumerated().flatMap { (i, a) in
                d.agreed[(i + 1)...].filter { b in !d.overlaps.contains { $0.servers.contains(a) && $0.servers.contains(b) } }.map {
                    "\(a) and \($0)"
                }
            }
            agreed += " (" + (overlaps + apart.map { "\($0) do not overlap" }).joined(separator: "; ") + "; the interval spans them)"
        }
        lines.append(agreed)
        if !d.outvoted.isEmpty { lines.append("time outvoted:   " + refusals(d.outvoted)) }
        if !d.failed.isEmpty { lines.append("time failed:     " + refusals(d.failed)) }
        if let earliest = d.earliest, let latest = d.latest { lines.append("time interval:   " + span(earliest, latest)) }
        return lines
    }

    private var intervalText: String {
        guard let authenticated else { return "interval" }
        return "\(RFC3339.format(authenticated.earliest)) to \(RFC3339.format(authenticated.latest))"
    }
}

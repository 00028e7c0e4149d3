import ClientFoundation
import FleetReports
import Foundation
import StrictJSON
import Synchronization

/// The device's report journal, `<root>/reports/` (docs/fleet-reports.md#journal-on-the-device):
/// one report per line, appended by every process of the root, read and trimmed by delivery.
///
/// - Durable: an append is one `write(2)` of the whole line on an `O_APPEND` descriptor,
///   then `fdatasync`, so a SIGKILL never leaves half a line behind a whole one and a power
///   cut keeps what was recorded. A torn last line is skipped on read and counted.
/// - Bounded by ``Limits``: past either bound the oldest undelivered reports are dropped
///   (the file rewritten atomically) and a `dropped` report says how many.
/// - Monotonic: the sequence number never goes back, across reopen, compaction and
///   delivery (`reports/state.json` keeps the last one; the journal's last line too).
/// - Never in the way: ``record(_:)`` never throws and never waits for long. A full disk,
///   an unwritable or damaged journal, or a lock held too long by another process drop
///   the report and count it; the next report that can be written says how many were lost.
package final class ReportJournal: Sendable {
    /// The journal's bounds.
    package struct Limits: Sendable, Equatable {
        /// The most reports kept (default 2,000).
        package var maxReports: Int
        /// The largest journal, in bytes (default 512 KiB).
        package var maxBytes: Int

        package init(maxReports: Int = 2_000, maxBytes: Int = 512 * 1024) {
            self.maxReports = max(4, maxReports)
            self.maxBytes = max(4096, maxBytes)
        }

        /// 2,000 reports, 512 KiB.
        package static let standard = Limits()
    }

    /// The root's paths.
    package let layout: RootLayout
    /// The bounds.
    package let limits: Limits
    private let now: @Sendable () -> Date
    /// Reports this process could not write (and has not yet said so in a `dropped` report).
    private let lost = Mutex<Int64>(0)

    /// A journal of the root at `layout` (nothing is created until the first report).
    package init(layout: RootLayout, limits: Limits = .standard, now: @escaping @Sendable () -> Date = Date.init) {
        self.layout = layout
        self.limits = limits
        self.now = now
    }

    // MARK: Recording

    /// Appends one report (seq and time assigned here); never throws: a full disk or a broken
    /// journal drops it and counts it. Cheap: one write(2) + fdatasync of one line (a
    /// compaction, when a bound is reached, rewrites the file once).
    package func record(_ report: ReportDraft) {
        guard let lock = JournalLock.take(layout.reportsLock, folder: layout.reports) else {
            lost.withLock { $0 += 1 }
            return
        }
        defer { lock.release() }
        if !append(report) { lost.withLock { $0 += 1 } }
    }

    /// One append under the lock; false when nothing was written.
    private func append(_ draft: ReportDraft) -> Bool {
        let fd = open(layout.reportsJournal, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o644)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { return false }
        let size = Int(st.st_size)
        let tail = JournalScan.tail(fd: fd, size: size)
        let state = JournalState.read(layout)
        let time = now()
        // The same refusal as the last report, within the heartbeat interval: nothing new to say.
        if let key = draft.refusalKey, key == state.lastRefusal, let last = state.lastRefusalTime,
            !HeartbeatRule.isDue(lastRecorded: JournalState.date(last), now: time)
        {
            return true
        }
        var seq = max(state.lastSeq, tail.lastSeq)
        var reports: [FleetReport] = []
        let lostNow = lost.withLock { $0 }
        if lostNow > 0 {
            seq += 1
            var dropped = FleetReport(seq: seq, time: time, type: .dropped, running: draft.running)
            dropped.shell = draft.shell
            dropped.count = lostNow
            reports.append(dropped)
        }
        seq += 1
        reports.append(draft.report(seq: seq, time: time))
        let lines = reports.map { ReportBatch.encode($0) + "\n" }.joined()
        let head = size > 0 ? JournalScan.head(fd: fd, size: size) : nil
        let count = head.map { tail.lastSeq >= $0 ? Int(tail.lastSeq - $0 + 1) : 0 } ?? 0
        if count + reports.count > limits.maxReports || size + lines.utf8.count + 1 > limits.maxBytes {
            guard compact(adding: reports, state: state) else { return false }
        } else {
            let text = (tail.torn ? "\n" : "") + lines
            let written = text.utf8.withContiguousStorageIfAvailable { buf in write(fd, buf.baseAddress, buf.count) }
            guard let written, written == text.utf8.count else { return false }
            // A failed fdatasync: the line may be on disk, but it is not known to be durable.
            guard FaultPoint.failure(at: "journal.appended") == nil, fdatasync(fd) == 0 else { return false }
        }
        let refusal = draft.refusalKey
        if lostNow > 0 || refusal != nil || state.lastRefusal != nil {
            lost.withLock { $0 -= lostNow }
            var next = JournalState.read(layout)
            next.lastSeq = max(next.lastSeq, seq)
            next.dropped += lostNow
            next.lastRefusal = refusal
            next.lastRefusalTime = refusal == nil ? nil : JournalState.millis(time)
            next.write(layout)
        }
        return true
    }

    /// Rewrites the journal within its bounds with `adding` at its end: the delivered
    /// reports go, then the oldest undelivered ones, and a `dropped` report says how many
    /// (the counts of `dropped` reports it drops are carried into it).
    private func compact(adding: [FleetReport], state: JournalState) -> Bool {
        let readCap = limits.maxBytes * 4 + 65_536
        var kept: [(report: FleetReport, line: String)] = []
        // Reports dropped now (for the state's total), and the count the new `dropped`
        // report carries (those plus the counts of the undelivered `dropped` reports it replaces).
        var newlyDropped: Int64 = 0
        var droppedCount: Int64 = 0
        if let data = try? BoundedFile.read(layout.reportsJournal, cap: readCap, code: UpdaterError.Code.corruptState) {
            for line in JournalScan.lines(data) {
                guard let report = line.report else { continue }
                if report.seq <= state.deliveredThrough { continue }
                if report.type == .dropped {
                    droppedCount += report.count ?? 0
                    continue
                }
                kept.append((report, line.text))
            }
        } else {
            // Unreadable or far too large: start again, counting what it held as dropped.
            newlyDropped += 1
        }
        let targetReports = limits.maxReports * 3 / 4
        let targetBytes = limits.maxBytes * 3 / 4
        let addingBytes = adding.reduce(0) { $0 + ReportBatch.encode($1).utf8.count + 1 } + 256
        var bytes = kept.reduce(0) { $0 + $1.line.utf8.count + 1 }
        var first = 0
        while first < kept.count, kept.count - first + adding.count + 1 > targetReports || bytes + addingBytes > targetBytes {
            newlyDropped += 1
            bytes -= kept[first].line.utf8.count + 1
            first += 1
        }
        var seq = max(state.lastSeq, kept.last?.report.seq ?? 0, adding.last?.seq ?? 0)
        droppedCount += newlyDropped
        var out = kept[first...].map { $0.line + "\n" }.joined()
        var tailReports = adding
        if droppedCount > 0, let last = adding.last {
            // Numbered after the new reports, so the sequence only grows.
            seq += 1
            var dropped = FleetReport(seq: seq, time: last.time, type: .dropped, running: last.running)
            dropped.shell = last.shell
            dropped.count = droppedCount
            tailReports = adding + [dropped]
        }
        out += tailReports.map { ReportBatch.encode($0) + "\n" }.joined()
        var next = state
        next.lastSeq = seq
        next.dropped += newlyDropped
        guard next.write(layout) else { return false }
        do {
            try AtomicFile.write(Data(out.utf8), to: layout.reportsJournal)
        } catch {
            return false
        }
        return true
    }

    // MARK: Reading and delivery

    /// Reports not yet delivered, oldest first: at most `maxReports`, at most `maxBytes` of JSON.
    package func pending(maxReports: Int, maxBytes: Int) -> [FleetReport] {
        let state = JournalState.read(layout)
        var out: [FleetReport] = []
        var bytes = 0
        var seen = Set<Int64>()
        for line in readLines().lines {
            guard let report = line.report, report.seq > state.deliveredThrough, seen.insert(report.seq).inserted else { continue }
            let size = line.text.utf8.count + 1
            if out.count >= maxReports || bytes + size > maxBytes { break }
            out.append(report)
            bytes += size
        }
        return out
    }

    /// The collector took every report up to `seq`: they leave the journal.
    package func delivered(through seq: Int64, at date: Date) {
        guard let lock = JournalLock.take(layout.reportsLock, folder: layout.reports) else { return }
        defer { lock.release() }
        var state = JournalState.read(layout)
        let read = readLines()
        state.deliveredThrough = max(state.deliveredThrough, seq)
        state.lastSeq = max(state.lastSeq, read.lines.compactMap { $0.report?.seq }.max() ?? 0)
        if let time = read.lines.compactMap({ $0.report?.time }).max().map(JournalState.millis) {
            state.lastTime = max(state.lastTime ?? 0, time)
        }
        state.lastAttempt = JournalState.millis(date)
        state.lastFailure = nil
        state.lastSuccess = JournalState.millis(date)
        guard state.write(layout) else { return }
        let kept = read.lines.filter { ($0.report?.seq ?? 0) > state.deliveredThrough }.map { $0.text + "\n" }.joined()
        try? AtomicFile.write(Data(kept.utf8), to: layout.reportsJournal)
    }

    /// The collector refused the reports up to `seq` too often: they leave the journal and
    /// count as dropped in `status`, with why.
    package func dropped(_ count: Int, through seq: Int64, at date: Date, reason: String) {
        delivered(through: seq, at: date)
        guard let lock = JournalLock.take(layout.reportsLock, folder: layout.reports) else {
            lost.withLock { $0 += Int64(count) }
            return
        }
        defer { lock.release() }
        var state = JournalState.read(layout)
        state.dropped += Int64(count)
        state.lastAttempt = JournalState.millis(date)
        state.lastFailure = FleetReport.clip(reason)
        state.write(layout)
    }

    /// The journal's stream: the one `reports/state.json` names, or a new one (recorded
    /// there) when the state was lost, so the collector never takes the sequence numbers
    /// that start again for duplicates of what it stored.
    package func stream() -> String {
        if let stream = JournalState.read(layout).stream { return stream }
        guard let lock = JournalLock.take(layout.reportsLock, folder: layout.reports) else { return JournalState.newStream() }
        defer { lock.release() }
        var state = JournalState.read(layout)
        if let stream = state.stream { return stream }
        let stream = JournalState.newStream()
        state.stream = stream
        state.write(layout)
        return stream
    }

    /// A delivery attempt failed (for status): when and why, one line.
    package func deliveryFailed(at date: Date, reason: String) {
        guard let lock = JournalLock.take(layout.reportsLock, folder: layout.reports) else { return }
        defer { lock.release() }
        var state = JournalState.read(layout)
        state.lastAttempt = JournalState.millis(date)
        state.lastFailure = FleetReport.clip(reason)
        state.write(layout)
    }

    /// Pending count, dropped, last delivery (time, ok/why).
    package var status: ReportJournalStatus {
        let state = JournalState.read(layout)
        let read = readLines()
        var pending = Set<Int64>()
        var waiting: [FleetReport] = []
        var lastSeq = state.lastSeq
        for line in read.lines {
            guard let report = line.report else { continue }
            lastSeq = max(lastSeq, report.seq)
            if report.seq > state.deliveredThrough, pending.insert(report.seq).inserted { waiting.append(report) }
        }
        waiting.sort { $0.seq < $1.seq }
        return ReportJournalStatus(
            pending: pending.count, dropped: state.dropped + lost.withLock { $0 },
            unreadable: read.lines.filter { $0.report == nil }.count + (read.unreadableFile ? 1 : 0), lastSeq: lastSeq,
            deliveredThrough: state.deliveredThrough,
            lastAttempt: state.lastAttempt.map { .init(time: JournalState.date($0), failure: state.lastFailure) },
            lastSuccess: state.lastSuccess.map(JournalState.date),
            heldUntil: ReportDeliverySchedule.heldUntil(waiting, now: now(), hold: ReportDeliverySchedule.Tuning.standard.hold))
    }

    /// When the last report was recorded (the journal's last line, else the last one
    /// delivered); nil when none ever was. For the heartbeat rule.
    package func lastRecordedAt() -> Date? {
        let state = JournalState.read(layout)
        var last = state.lastTime
        let fd = open(layout.reportsJournal, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        if fd >= 0 {
            defer { close(fd) }
            var st = stat()
            if fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG, let time = JournalScan.tail(fd: fd, size: Int(st.st_size)).lastTime {
                last = max(last ?? 0, time)
            }
        }
        return last.map(JournalState.date)
    }

    /// The reports still in the journal (delivered or not), oldest first: what `status
    /// --explain` reads of recent history.
    package func recent() -> [FleetReport] {
        readLines().lines.compactMap(\.report)
    }

    private func readLines() -> (lines: [JournalScan.Line], unreadableFile: Bool) {
        do {
            guard let data = try BoundedFile.read(layout.reportsJournal, cap: limits.maxBytes * 4 + 65_536, code: UpdaterError.Code.corruptState)
            else { return ([], false) }
            return (JournalScan.lines(data), false)
        } catch {
            return ([], true)
        }
    }
}

extension RootLayout {
    /// `reports/`: the report journal (docs/device-layout.md).
    package var reports: String { root + "/reports" }
    /// `reports/journal.jsonl`: one report per line.
    package var reportsJournal: String { reports + "/journal.jsonl" }
    /// `reports/state.json`: the last sequence number, what was delivered, how many dropped.
    package var reportsState: String { reports + "/state.json" }
    /// `reports/lock`: held for one append, a compaction or a delivery's trim.
    package var reportsLock: String { reports + "/lock" }
}

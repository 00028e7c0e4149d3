import FleetReports
import Foundation
import Synchronization
import TestSupport
import Testing

@testable import ClientUpdater

/// The report journal on real files: durable lines, torn lines, bounds, a sequence that
/// never goes back, concurrent appenders and a full disk.
@Suite struct ReportJournalTests {
    static func draft(_ type: ReportKind = .start, _ n: Int = 0) -> ReportDraft {
        ReportDraft(type, running: "1.0.\(n)", shell: "2.0.0")
    }

    static func journalText(_ layout: RootLayout) -> String {
        (try? String(contentsOfFile: layout.reportsJournal, encoding: .utf8)) ?? ""
    }

    /// Every report the journal holds, dropped ones expanded: what was recorded is either
    /// there or counted.
    static func accounted(_ reports: [FleetReport]) -> Int64 {
        reports.reduce(0) { $0 + ($1.type == .dropped ? ($1.count ?? 0) : 1) }
    }

    /// A device waiting for its rollout place refuses the release at every check; the same
    /// refusal is recorded once per heartbeat interval (6 h), not at every check (the fleet
    /// benchmark measured 23.5 a day, 13.8 KB). Another detail (the rollout moved on), another
    /// report between, or the interval passed: recorded again. Kept across processes.
    @Test func theSameRefusalIsRecordedOncePerHeartbeatInterval() throws {
        let dir = try TemporaryDirectory("journal-refusals")
        let layout = RootLayout(root: dir.path)
        let clock = Mutex(Date(timeIntervalSince1970: 1_764_090_000))
        func journal() -> ReportJournal { ReportJournal(layout: layout, now: { clock.withLock { $0 } }) }
        func waiting(_ detail: String) -> ReportDraft {
            ReportDraft(.checkRefused, running: "1.0.0", shell: "2.0.0", version: "1.1.0", reason: .rollout, detail: detail)
        }
        func refusals() -> [String] {
            journal().pending(maxReports: 100, maxBytes: 100_000).filter { $0.type == .checkRefused }.compactMap(\.detail)
        }
        // Hourly checks for five hours, each a new process: one report.
        for _ in 0..<6 {
            journal().record(waiting("place 6120 of 10000: rollout at 5%"))
            clock.withLock { $0 += 3600 }
        }
        #expect(refusals() == ["place 6120 of 10000: rollout at 5%"])
        // Six hours after the first: due again.
        journal().record(waiting("place 6120 of 10000: rollout at 5%"))
        #expect(refusals().count == 2)
        // The rollout moved on: a new detail is recorded at once.
        journal().record(waiting("place 6120 of 10000: rollout at 25%"))
        #expect(refusals().count == 3)
        // Another report in between: the same refusal after it is recorded.
        journal().record(Self.draft(.start))
        journal().record(waiting("place 6120 of 10000: rollout at 25%"))
        #expect(refusals().count == 4)
        journal().record(waiting("place 6120 of 10000: rollout at 25%"))
        #expect(refusals().count == 4)
    }

    @Test func recordsReadsAndDeliversWithAGrowingSequence() throws {
        let dir = try TemporaryDirectory("journal")
        let layout = RootLayout(root: dir.path)
        let clock = Mutex(Date(timeIntervalSince1970: 1_764_090_000))
        let journal = ReportJournal(layout: layout, now: { clock.withLock { $0 } })
        #expect(journal.pending(maxReports: 10, maxBytes: 10_000).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: layout.reports))  // nothing until a report

        var committed = ReportDraft(.committed, running: "1.1.0", shell: "2.0.0", version: "1.1.0")
        committed.ms = 840
        journal.record(Self.draft())
        journal.record(committed)
        let pending = journal.pending(maxReports: 10, maxBytes: 10_000)
        #expect(pending.map(\.seq) == [1, 2])
        #expect(pending[1].type == .committed && pending[1].ms == 840 && pending[1].shell == "2.0.0")
        #expect(pending[1].time == Date(timeIntervalSince1970: 1_764_090_000))
        #expect(journal.status.pending == 2)

        // The lines are the batch's report objects.
        let lines = Self.journalText(layout).split(separator: "\n")
        #expect(lines.count == 2)
        let expected = #"{"seq":2,"time":1764090000000,"type":"committed","running":"1.1.0","shell":"2.0.0","version":"1.1.0","ms":840}"#
        #expect(lines[1] == expected)

        // Limits of one call.
        #expect(journal.pending(maxReports: 1, maxBytes: 10_000).map(\.seq) == [1])
        #expect(journal.pending(maxReports: 10, maxBytes: lines[0].utf8.count + 1).map(\.seq) == [1])

        // Delivered: they leave; the sequence goes on, also in a new instance (a new process).
        journal.delivered(through: 2, at: Date(timeIntervalSince1970: 1_764_090_100))
        #expect(Self.journalText(layout).isEmpty)
        let reopened = ReportJournal(layout: layout)
        reopened.record(Self.draft(.heartbeat))
        #expect(reopened.pending(maxReports: 10, maxBytes: 10_000).map(\.seq) == [3])
        let status = reopened.status
        #expect(status.pending == 1 && status.lastSeq == 3 && status.deliveredThrough == 2)
        #expect(status.lastSuccess == Date(timeIntervalSince1970: 1_764_090_100))
        #expect(status.lastAttempt?.failure == nil)

        reopened.deliveryFailed(at: Date(timeIntervalSince1970: 1_764_090_200), reason: "collector answered 503")
        #expect(reopened.status.lastAttempt == .init(time: Date(timeIntervalSince1970: 1_764_090_200), failure: "collector answered 503"))
        #expect(reopened.status.lastSuccess == Date(timeIntervalSince1970: 1_764_090_100))
    }

    @Test func aTornLastLineIsSkippedCountedAndNeverGluedToTheNext() throws {
        let dir = try TemporaryDirectory("journal")
        let layout = RootLayout(root: dir.path)
        let journal = ReportJournal(layout: layout)
        journal.record(Self.draft())
        journal.record(Self.draft())
        // What a power cut can leave: the start of a third line, no newline.
        let fd = open(layout.reportsJournal, O_WRONLY | O_APPEND)
        _ = "{\"seq\":3,\"time\":17640".withCString { write(fd, $0, strlen($0)) }
        close(fd)
        #expect(journal.pending(maxReports: 10, maxBytes: 10_000).map(\.seq) == [1, 2])
        #expect(journal.status.unreadable == 1)

        journal.record(Self.draft(.heartbeat))
        let seqs = journal.pending(maxReports: 10, maxBytes: 10_000).map(\.seq)
        #expect(seqs == [1, 2, 3])
        #expect(journal.status.unreadable == 1)
        #expect(Self.journalText(layout).hasSuffix("\n"))
    }

    @Test func boundedByCountWithADroppedReport() throws {
        let dir = try TemporaryDirectory("journal")
        let layout = RootLayout(root: dir.path)
        let journal = ReportJournal(layout: layout, limits: .init(maxReports: 20, maxBytes: 1 << 20))
        for i in 1...50 { journal.record(Self.draft(.start, i)) }
        let reports = journal.pending(maxReports: 500, maxBytes: 1 << 20)
        #expect(reports.count <= 20)
        #expect(reports.contains { $0.type == .dropped })
        // Nothing vanished without being counted, and the newest is kept.
        #expect(Self.accounted(reports) == 50)
        #expect(reports.last { $0.type != .dropped }?.running == "1.0.50")
        // The sequence only grows (the dropped report is numbered after what it follows).
        #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.seq < $1.seq })
        #expect(journal.status.dropped == 50 - Int64(reports.filter { $0.type != .dropped }.count))
        #expect(journal.status.lastSeq == reports.last?.seq)
    }

    @Test func boundedByBytes() throws {
        let dir = try TemporaryDirectory("journal")
        let layout = RootLayout(root: dir.path)
        let journal = ReportJournal(layout: layout, limits: .init(maxReports: 2_000, maxBytes: 8192))
        for i in 1...400 {
            var d = Self.draft(.downloadFailed, i)
            d.reason = .network
            d.detail = String(repeating: "x", count: 150)
            journal.record(d)
            let size = (try? FileManager.default.attributesOfItem(atPath: layout.reportsJournal)[.size] as? Int) ?? 0
            #expect(size <= 8192)
        }
        let reports = journal.pending(maxReports: 2_000, maxBytes: 1 << 20)
        #expect(Self.accounted(reports) == 400)
        #expect(reports.filter { $0.type == .dropped }.count == 1)  // earlier dropped reports are folded in
    }

    @Test func theSequenceNeverGoesBackAcrossCompactionDeliveryAndALostStateFile() throws {
        let dir = try TemporaryDirectory("journal")
        let layout = RootLayout(root: dir.path)
        let limits = ReportJournal.Limits(maxReports: 10, maxBytes: 1 << 20)
        var last: Int64 = 0
        for round in 0..<5 {
            let journal = ReportJournal(layout: layout, limits: limits)  // a new process each round
            for i in 0..<7 { journal.record(Self.draft(.start, round * 10 + i)) }
            let seqs = journal.pending(maxReports: 100, maxBytes: 1 << 20).map(\.seq)
            #expect(seqs.allSatisfy { $0 > last } || round % 2 == 1)
            if let top = seqs.max() {
                #expect(top > last)
                last = top
            }
            if round % 2 == 0 { journal.delivered(through: last - 2, at: Date()) }
        }
        // The state file lost: the journal's last line still carries the sequence on.
        try FileManager.default.removeItem(atPath: layout.reportsState)
        let journal = ReportJournal(layout: layout, limits: limits)
        journal.record(Self.draft())
        #expect(journal.pending(maxReports: 100, maxBytes: 1 << 20).last?.seq == last + 1)
        // A damaged state file likewise.
        try Data("{not json".utf8).write(to: URL(fileURLWithPath: layout.reportsState))
        journal.record(Self.draft())
        #expect(journal.pending(maxReports: 100, maxBytes: 1 << 20).last?.seq == last + 2)
    }

    /// flock(2): locks belong to an open file description, so two journals of one root in
    /// one process (each opening `reports/lock` itself) exclude each other exactly as two
    /// processes do. The real two-process case is DeviceReportsTests' serve beside install.
    @Test func twoAppendersAtOnceNeverShareOrInterleave() async throws {
        let dir = try TemporaryDirectory("journal")
        let layout = RootLayout(root: dir.path)
        let a = ReportJournal(layout: layout)
        let b = ReportJournal(layout: layout)
        await withTaskGroup(of: Void.self) { group in
            for journal in [a, b] {
                group.addTask {
                    await Task.detached {
                        for i in 0..<150 { journal.record(Self.draft(.heartbeat, i)) }
                    }.value
                }
            }
        }
        // One more from each flushes any report lost to a busy lock into a dropped report.
        a.record(Self.draft(.heartbeat))
        b.record(Self.draft(.heartbeat))
        let reports = a.pending(maxReports: 2_000, maxBytes: 1 << 20)
        #expect(a.status.unreadable == 0)
        #expect(reports.map(\.seq) == Array(1...Int64(reports.count)))
        #expect(Self.accounted(reports) == 302)
    }

    @Test func anUnwritableJournalDropsAndCountsWithoutThrowing() throws {
        let dir = try TemporaryDirectory("journal")
        let layout = RootLayout(root: dir.path)
        try FileManager.default.createDirectory(atPath: layout.reportsJournal, withIntermediateDirectories: true)
        let journal = ReportJournal(layout: layout)
        journal.record(Self.draft())
        journal.record(Self.draft())
        #expect(journal.status.dropped == 2)
        #expect(journal.pending(maxReports: 10, maxBytes: 10_000).isEmpty)
        // Repaired: the next report says how many were lost.
        try FileManager.default.removeItem(atPath: layout.reportsJournal)
        journal.record(Self.draft(.heartbeat))
        let reports = journal.pending(maxReports: 10, maxBytes: 10_000)
        #expect(reports.map(\.type) == [.dropped, .heartbeat])
        #expect(reports.first?.count == 2)
        #expect(journal.status.dropped == 2)
    }

    @Test func aFullDiskDropsAndCountsThenRecovers() throws {
        let dir = try TemporaryDirectory("journal")
        let fs = try Tmpfs.mount(at: dir.path, size: "256k")
        defer { fs.unmount() }
        let layout = RootLayout(root: dir.path)
        let journal = ReportJournal(layout: layout)
        Tmpfs.fill(dir("filler"), leaving: 0)
        for _ in 0..<5 { journal.record(Self.draft(.heartbeat)) }
        #expect(journal.status.dropped == 5)
        #expect(journal.pending(maxReports: 10, maxBytes: 10_000).isEmpty)
        try Tmpfs.removeFiller(dir("filler"))
        journal.record(Self.draft(.start))
        let reports = journal.pending(maxReports: 10, maxBytes: 10_000)
        #expect(reports.map(\.type) == [.dropped, .start], "\(journal.status), \(Tmpfs.free(at: dir.path)) bytes free")
        #expect(reports.first?.count == 5)
        #expect(reports.map(\.seq) == [1, 2])
    }
}

/// The heartbeat rule on an injected clock: no sleeping.
@Suite struct HeartbeatRuleTests {
    let t0 = Date(timeIntervalSince1970: 1_764_090_000)

    @Test func dueOnlyAfterSixQuietHours() {
        #expect(HeartbeatRule.isDue(lastRecorded: nil, now: t0))
        #expect(!HeartbeatRule.isDue(lastRecorded: t0, now: t0))
        #expect(!HeartbeatRule.isDue(lastRecorded: t0, now: t0.addingTimeInterval(6 * 3600 - 1)))
        #expect(HeartbeatRule.isDue(lastRecorded: t0, now: t0.addingTimeInterval(6 * 3600)))
        // A clock set far back: the last report is "in the future"; a heartbeat still comes.
        #expect(HeartbeatRule.isDue(lastRecorded: t0, now: t0.addingTimeInterval(-7 * 3600)))
    }

    @Test func anUpToDateCheckRecordsAHeartbeatOnlyWhenQuiet() throws {
        let dir = try TemporaryDirectory("heartbeat")
        let layout = RootLayout(root: dir.path)
        let clock = Mutex(t0)
        let journal = ReportJournal(layout: layout, now: { clock.withLock { $0 } })
        #expect(journal.lastRecordedAt() == nil)
        journal.record(ReportDraft(.start, running: "1.0.0"))
        #expect(journal.lastRecordedAt() == t0)
        // Delivered: the journal is empty but the last time is kept.
        journal.delivered(through: 1, at: t0)
        #expect(journal.lastRecordedAt() == t0)
        clock.withLock { $0 = t0.addingTimeInterval(7 * 3600) }
        #expect(HeartbeatRule.isDue(lastRecorded: journal.lastRecordedAt(), now: clock.withLock { $0 }))
    }
}

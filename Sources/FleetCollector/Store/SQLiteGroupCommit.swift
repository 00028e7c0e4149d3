import Dispatch
import Foundation
import GRDB
import Synchronization

/// Group commit for SQLite's one writer: the batches that arrive while the writer is busy
/// wait together and are then written in one transaction, each batch's statements in turn,
/// and every one of them is answered after that transaction's commit. A commit costs a
/// sync of the WAL (`synchronous=FULL`), which on most disks is most of a batch's time:
/// shared by the batches that waited for it, it no longer caps ingest at one batch per
/// sync (BENCHMARKS.md, issue 68). Nothing is answered before its commit, so an answered
/// batch survives a SIGKILL as before; a batch alone (no other waiting) is written as
/// before, in a transaction of its own, at once.
///
/// A batch's work decides from what the transaction holds when its turn comes, so the
/// batches of one group see each other as consecutive transactions would. An error thrown
/// by a batch's work (the database's, or a refusal that must take back what the batch
/// wrote) rolls the whole group back, and then each of its batches is written again in a
/// transaction of its own: a batch that fails fails alone, as when each batch had its own
/// transaction. No savepoint per batch: SQLite would copy the pages a batch changes that
/// the batches before it changed too into a statement journal (a temporary file, past 64
/// KiB), which cost more than it saved.
final class SQLiteGroupCommit: Sendable {
    /// One batch's statements, run in the writer's transaction.
    typealias Work = @Sendable (Database) throws -> IngestResult

    /// The most batches in one transaction (the collector's in-flight places bound it too).
    static let maxBatches = 64

    private struct Waiting {
        let work: Work
        let answer: CheckedContinuation<IngestResult, any Error>
    }

    private struct State {
        var waiting: [Waiting] = []
        /// Whether a task is writing the waiting batches.
        var writing = false
    }

    private let pool: DatabasePool
    private let state = Mutex(State())
    /// Where the groups are written, one after another, with GRDB's blocking `write`: the
    /// next group starts as soon as the last one committed, without waiting for a thread of
    /// Swift's cooperative pool (2 on 2 cores, both busy reading the next batches).
    private let writerQueue = DispatchQueue(label: "clientctl.collect.sqlite-writer")

    init(pool: DatabasePool) {
        self.pool = pool
    }

    /// The batches waiting for the writer now (not those it is writing), and whether it is
    /// writing.
    var queue: (waiting: Int, writing: Bool) { state.withLock { ($0.waiting.count, $0.writing) } }

    /// Runs `work` in a write transaction, perhaps together with other batches' work;
    /// returns its answer once that transaction committed.
    /// - Throws: the database's error when the batch could not be written.
    func write(_ work: @escaping Work) async throws -> IngestResult {
        try await withCheckedThrowingContinuation { answer in
            let leads = state.withLock { state in
                state.waiting.append(Waiting(work: work, answer: answer))
                guard !state.writing else { return false }
                state.writing = true
                return true
            }
            if leads { writerQueue.async { self.drain() } }
        }
    }

    /// Writes groups of the waiting batches until none waits.
    private func drain() {
        while true {
            let group = state.withLock { state -> [Waiting] in
                guard !state.waiting.isEmpty else {
                    state.writing = false
                    return []
                }
                let count = min(state.waiting.count, Self.maxBatches)
                defer { state.waiting.removeFirst(count) }
                return Array(state.waiting.prefix(count))
            }
            guard !group.isEmpty else { return }
            write(group)
        }
    }

    private func write(_ group: [Waiting]) {
        if group.count > 1 {
            do {
                let answers = try pool.write { db in try group.map { try $0.work(db) } }
                for (waiting, answer) in zip(group, answers) { waiting.answer.resume(returning: answer) }
                return
            } catch {
                // Rolled back whole: nothing of the group is stored. Each batch again, alone
                // (should the commit have reached the disk all the same, its reports are then
                // answered as duplicates: stored, as a device's retry would find them).
            }
        }
        for waiting in group {
            do {
                let answer = try pool.write { db in try waiting.work(db) }
                waiting.answer.resume(returning: answer)
            } catch {
                waiting.answer.resume(throwing: error)
            }
        }
    }
}

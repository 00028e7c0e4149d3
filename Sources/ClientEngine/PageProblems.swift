import ClientFoundation
import ClientUpdater
import DeviceSetup
import FleetReports
import Foundation
import Synchronization

/// The agent's count of the page's problems after its acknowledgement
/// (docs/page-errors.md): ``ProblemTally`` on the injected monotonic clock, its reports
/// written to the root's journal, its period kept in `reports/page-errors.json` while the
/// host is down, and the first hour's local rollback carried out by ``run()`` when the
/// device allows it (`errorRollback` in `config.json`). Hosts feed it: the shell from its web view, `serve`
/// from the shim's `POST /__clientctl/problems`.
package final class PageProblems: Sendable {
    /// A page's `WebAppLocalServer.reportProblem(kind)`: a word of at most 32 characters.
    package static let maxKindLength = 32
    /// App-defined problems counted per minute at most, a burst of ``appBurst`` then one a second.
    package static let appBurst = 10
    /// The most problems one call may add (a page's coalesced count of a second).
    package static let maxCount: Int64 = 1_000_000

    private let updater: Updater
    private let clock: MonotonicClock
    private let allowRollback: Bool
    private let file: String?
    private struct State {
        var tally: ProblemTally
        /// App-defined problems' bucket: a burst of ``appBurst``, then one a second.
        var appProblems = TokenBucket(capacity: Double(PageProblems.appBurst), refill: 1, every: .seconds(1))
        var lastSave: Duration = .zero
        var dirty = false
        /// Rollbacks the tally asked for, which ``run()`` carries out.
        var rollbacks: [String] = []
    }
    private let state: Mutex<State>
    /// Wakes ``run()``: an acknowledgement moves its next moment, a rollback is due.
    private let signal: WakeSignal
    /// Told each rollback's end (see ``init(updater:clock:allowRollback:rollbackEnded:)``).
    private let rollbackEnded: (@Sendable (String) -> Void)?

    /// - Parameters:
    ///   - updater: the engine's updater: its journal takes the reports (nothing without a
    ///     report URL) and its rollback the first hour's failure.
    ///   - clock: the monotonic clock of use.
    ///   - allowRollback: the device allows the first hour's local rollback.
    ///   - rollbackEnded: called with the version once each rollback ``run()`` carried out
    ///     has ended (done, skipped or failed: its state and reports are written); for tests,
    ///     which wait for it instead of polling the root.
    package init(
        updater: Updater, clock: MonotonicClock = .continuous, allowRollback: Bool,
        rollbackEnded: (@Sendable (String) -> Void)? = nil
    ) {
        self.updater = updater
        self.rollbackEnded = rollbackEnded
        self.clock = clock
        self.allowRollback = allowRollback
        signal = WakeSignal(clock: clock)
        let reportsOn = updater.journal != nil
        file = reportsOn ? updater.layout.reports + "/page-errors.json" : nil
        let saved = file.flatMap { try? BoundedFile.read($0, cap: 16 * 1024, code: EngineError.Code.configInvalid) }
            .flatMap { try? JSONDecoder().decode(ProblemTally.Saved.self, from: $0) }
        state = Mutex(State(tally: ProblemTally(saved: saved)))
    }

    /// A page of `version` acknowledged its start (a load).
    package func acknowledged(version: String) {
        apply { $0.acknowledged(version, at: $1) }
        signal.wake()
    }

    /// `count` uncaught errors and unhandled rejections of a page of `version` after its
    /// acknowledgement, with a few of their messages (already without user data beyond the
    /// message and the app's own script).
    package func pageErrors(_ count: Int64, messages: [String], version: String) {
        let count = min(max(0, count), Self.maxCount)
        apply { $0.problems(count, messages: Array(messages.prefix(ProblemTally.maxMessages)), version: version, at: $1) }
    }

    /// The web process of a page of `version` died after its acknowledgement.
    package func webProcessDied(version: String, reason: String) {
        apply { $0.problems(1, messages: ["web process \(reason)"], version: version, at: $1) }
    }

    /// The app's own problem (`WebAppLocalServer.reportProblem(kind)`), counted like an
    /// error, at most ``appBurst`` at once and one a second after that.
    /// - Throws: ``EngineError`` `.invalidArgument` for a kind that is not a word of at most
    ///   32 letters, digits, `-`, `_` or `.` (nothing is counted).
    package func appProblem(_ kind: String, version: String) throws {
        guard let problem = Self.kindProblem(kind) else {
            applyCounting { tally, now, state in
                guard state.appProblems.take(at: now) == nil else { return [] }
                return tally.problems(1, messages: ["app: \(kind)"], version: version, at: now)
            }
            return
        }
        throw EngineError(.invalidArgument, "reportProblem: \(problem)")
    }

    /// Why `kind` is not an app problem's kind, nil when it is one.
    package static func kindProblem(_ kind: String) -> String? {
        if kind.isEmpty { return "the kind is empty" }
        if kind.count > maxKindLength { return "the kind is longer than \(maxKindLength) characters" }
        let ok = kind.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "-_.".unicodeScalars.contains($0)) }
        return ok ? nil : "the kind \(Quoting.quoted(String(kind.prefix(maxKindLength)))) may hold only letters, digits, '-', '_' and '.'"
    }

    /// The served version changed to `version`: a version that leaves the screen reports
    /// what is left of its period.
    package func served(_ version: String) {
        apply { tally, now in tally.version == nil || tally.version == version ? [] : tally.left(at: now) }
    }

    /// Reports due periods and carries out the first hour's rollbacks until the task is
    /// cancelled, then ends use and keeps the period. The rollbacks run in a task group the
    /// run owns, so none outlives it: one under way when the task is cancelled is cancelled
    /// and waited for.
    package func run() async {
        await withDiscardingTaskGroup { group in
            while !Task.isCancelled {
                for version in state.withLock({ state in
                    defer { state.rollbacks = [] }
                    return state.rollbacks
                }) {
                    group.addTask { await self.rollBack(version) }
                }
                let now = clock.now
                let next = state.withLock { $0.tally.nextDue(at: now) } ?? (now + .seconds(3600))
                await signal.wait(until: min(next, now + .seconds(600)))
                tick()
            }
        }
        stop()
    }

    /// The first hour's local rollback of `version`, when it is still the current one.
    private func rollBack(_ version: String) async {
        defer { rollbackEnded?(version) }
        do {
            try await updater.rollback(ifCurrent: version, reason: .pageErrors)
        } catch {
            updater.logger.warning("\(version) failed most of its page loads in its first hour and cannot go back: \(error)")
        }
    }

    /// Reports what is due now and keeps the period when it changed (every 10 minutes at most).
    package func tick() {
        apply { $0.due(at: $1) }
        save(force: false)
    }

    /// Use ends (the host stops); the period is kept for the next start.
    package func stop() {
        let now = clock.now
        state.withLock { $0.tally.stop(at: now) }
        save(force: true)
    }

    private func apply(_ body: (inout ProblemTally, Duration) -> [ProblemTally.Output]) {
        applyCounting { tally, now, _ in body(&tally, now) }
    }

    private func applyCounting(_ body: (inout ProblemTally, Duration, inout State) -> [ProblemTally.Output]) {
        let now = clock.now
        let out = state.withLock { state -> [ProblemTally.Output] in
            var tally = state.tally
            let out = body(&tally, now, &state)
            if tally != state.tally { state.dirty = true }
            state.tally = tally
            return out
        }
        for output in out {
            switch output {
            case .report(let draft):
                updater.recordReport(draft)
            case .rollBack(let version):
                guard allowRollback else { continue }
                state.withLock { $0.rollbacks.append(version) }
                signal.wake()
            }
        }
    }

    private func save(force: Bool) {
        guard let file else { return }
        let now = clock.now
        let snapshot = state.withLock { state -> ProblemTally.Saved?? in
            guard state.dirty, force || now - state.lastSave >= .seconds(600) else { return .none }
            state.dirty = false
            state.lastSave = now
            return .some(state.tally.snapshot(at: now))
        }
        guard case .some(let saved) = snapshot else { return }
        if let saved, let data = try? JSONEncoder().encode(saved) {
            try? FileManager.default.createDirectory(atPath: updater.layout.reports, withIntermediateDirectories: true)
            try? AtomicFile.write(data, to: file)
        } else {
            try? FileManager.default.removeItem(atPath: file)
        }
    }
}

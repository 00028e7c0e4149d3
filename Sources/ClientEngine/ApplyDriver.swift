import ApplyPolicy
import ClientUpdater
import Foundation
import Synchronization

/// Switches a host to its staged version when the version's apply policy allows it
/// (docs/apply-policies.md): the one place that feeds ``ApplyDecision`` with what a running
/// host knows — the last user input, the page's leases, a download or a trial — and acts
/// on its answer.
///
/// It holds no rule of its own: every answer is `ApplyDecision.decide(_:now:)`'s, on the
/// injected clock. It decides again when the host wakes it (a new version staged, a trial
/// ended, a lease released, a navigation) and at `ApplyDecision.nextWake(_:now:)`, at
/// least every ``maxSleep`` so that a clock that jumps is caught. Input does not wake it:
/// input only ever delays a switch.
package final class ApplyDriver: Sendable {
    /// The longest lease a page may hold at once (it may renew).
    package static let maxLeaseSeconds: Double = 600
    /// The most leases held at once (pages of one host).
    package static let maxLeases = 64
    /// The longest wait between two decisions.
    package static let maxSleep: Duration = .seconds(30)
    /// After a switch that failed, the wait before trying again.
    package static let retryAfterFailure: TimeInterval = 60

    private let updater: Updater
    private let windows: [MaintenanceWindow]
    private let now: @Sendable () -> Date
    /// True when the host puts a new version on screen itself (the shell); false when a
    /// page must do it (`serve`: the page's shim switches when ``allowedSwitch`` says so).
    private let switchesInPlace: Mutex<Bool>
    private let signal = WakeSignal()

    private struct State {
        /// Decisions made so far (``decisions``).
        var steps = 0
        var hostStartedAt: Date
        var lastInput: Date?
        var leases: [String: Date] = [:]
        /// Checks downloading now, whoever started them (the schedule, a page, the shell's bridge).
        var downloads = 0
        var switched: Set<String> = []
        var failedUntil: Date?
        var written: (line: String, at: Date)?
        var waitsForNavigation = false
        /// `serve`: the staged version the policy lets a page switch to now, and why.
        var allowed: (version: String, trigger: String)?
    }
    private let state: Mutex<State>

    /// A driver for `updater`'s root.
    /// - Parameters:
    ///   - windows: the device's maintenance windows (config `applyWindows`, read in its zone).
    ///   - now: the wall clock.
    package init(updater: Updater, windows: [MaintenanceWindow], now: @escaping @Sendable () -> Date = { Date() }) {
        self.updater = updater
        self.windows = windows
        self.now = now
        self.switchesInPlace = Mutex(true)
        self.state = Mutex(State(hostStartedAt: now()))
    }

    /// `serve`: the host cannot put a version on screen, a page must. From now on a
    /// switch the policy allows waits for a page's shim (``allowedSwitch``, ``switchForPage(from:)``),
    /// a navigation or the next start: a page that asks is alive, so its trial has a page.
    package func switchThroughPages() {
        switchesInPlace.withLock { $0 = false }
    }

    /// The staged version a page may switch to now, when the policy allows it and the host
    /// switches through its pages.
    /// None while a check downloads.
    package func allowedSwitch() -> String? { state.withLock { $0.downloads > 0 ? nil : $0.allowed?.version } }

    /// A page asks to switch (its shim saw ``allowedSwitch``, or the page's own
    /// `switchToPendingVersion()`): with the policy's trigger when it allows the switch,
    /// else as asked. `pageVersion`: the version the page was served with.
    package func switchForPage(from pageVersion: String?) async throws -> LifecycleReport {
        let allowed = state.withLock { $0.allowed }
        let report: LifecycleReport
        if let allowed {
            report = try await updater.switchStaged(allowed.version, trigger: allowed.trigger, from: pageVersion)
        } else {
            report = try await updater.reload(from: pageVersion)
        }
        state.withLock { s in
            if let allowed { s.switched.insert(allowed.version) }
            s.allowed = nil
            s.written = nil
            s.waitsForNavigation = false
        }
        ApplyStatus.remove(updater.layout)
        return report
    }

    /// The user did something (a key, the pointer, a touch): idle time starts again.
    package func noteInput() {
        let t = now()
        state.withLock { $0.lastInput = t }
    }

    /// A page holds the switch back for `seconds` (at most ``maxLeaseSeconds``; 0 or less
    /// releases `lease`). Returns when the lease ends.
    @discardableResult
    package func hold(lease: String, seconds: Double) -> Date {
        let t = now()
        let until = t.addingTimeInterval(min(max(seconds.isFinite ? seconds : 0, 0), Self.maxLeaseSeconds))
        state.withLock { s in
            if until > t { s.leases[lease] = until } else { s.leases[lease] = nil }
            // Bounded whatever a page posts: past the cap the lease ending first goes.
            while s.leases.count > Self.maxLeases, let first = s.leases.min(by: { $0.value < $1.value })?.key { s.leases[first] = nil }
        }
        signal.wake()
        return until
    }

    /// Ends every lease whose id starts with `prefix` (all when empty): their page, web
    /// process or host is gone.
    package func releaseLeases(prefix: String = "") {
        state.withLock { s in s.leases = prefix.isEmpty ? [:] : s.leases.filter { !$0.key.hasPrefix(prefix) } }
        signal.wake()
    }

    /// Runs `check` as a download: no switch while it runs, and a decision once it ended.
    /// Checks may overlap (a page's beside the periodic one): each counts until it ends.
    package func whileDownloading<T: Sendable>(_ check: () async throws -> T) async rethrows -> T {
        // A switch allowed before the download is not allowed during it: the page's shim
        // (``allowedSwitch``) must not switch while the next version downloads.
        state.withLock { s in
            s.downloads += 1
            s.allowed = nil
        }
        signal.wake()
        defer {
            state.withLock { $0.downloads -= 1 }
            signal.wake()
        }
        return try await check()
    }

    /// Checks downloading now.
    package var downloadCount: Int { state.withLock { $0.downloads } }

    /// Something changed that may allow a switch (a version staged, a trial ended).
    package func wake() { signal.wake() }

    /// The input of a decision about `staged` at `t`, expired leases dropped.
    private func input(_ staged: StagedSwitch, at t: Date) -> ApplyInput {
        state.withLock { s in
            s.leases = s.leases.filter { $0.value > t }
            return ApplyInput(
                policy: staged.policy, stagedAt: staged.since ?? t, hostStartedAt: s.hostStartedAt, windows: windows,
                lastInput: s.lastInput, leaseUntil: s.leases.values.max(), trialRunning: staged.trialRunning,
                downloading: s.downloads > 0, alreadySwitched: s.switched.contains(staged.version))
        }
    }

    /// What one ``step(navigation:)`` decided and did.
    package struct Step: Sendable, Equatable {
        /// The answer; nil when nothing is staged.
        package var decision: ApplyDecision?
        /// The version switched to in this step, if it switched.
        package var switched: String?
        /// When to decide again at the latest (nil: only when woken).
        package var wake: Date?
    }

    /// Decides once and switches when the answer says so. With `navigation` (the page
    /// navigates), a version that waits for the next navigation switches too, and the host
    /// need not reload (the navigation loads it).
    @discardableResult
    package func step(navigation: Bool = false) async -> Step {
        state.withLock { $0.steps += 1 }
        guard let staged = updater.stagedSwitch() else {
            let hadStatus = state.withLock { s in
                defer {
                    s.written = nil
                    s.waitsForNavigation = false
                }
                return s.written != nil
            }
            if hadStatus { ApplyStatus.remove(updater.layout) }
            return Step(decision: nil, switched: nil, wake: nil)
        }
        let t = now()
        let input = input(staged, at: t)
        let decision = ApplyDecision.decide(input, now: t)
        let wake = ApplyDecision.nextWake(input, now: t)
        state.withLock { s in
            s.waitsForNavigation = decision == .wait(.nextNavigation) || decision.isSwitch
            s.allowed = nil
        }
        let trigger: String
        switch decision {
        case .switchNow(let why):
            trigger = why.rawValue
            if !navigation, !switchesInPlace.withLock({ $0 }) {
                state.withLock { $0.allowed = (staged.version, why.rawValue) }
                record(
                    staged, "switch allowed (\(why)): waiting for a page's shim to switch, a navigation or the next start", at: t,
                    wake: wake)
                return Step(decision: decision, switched: nil, wake: wake ?? t.addingTimeInterval(Self.maxSleep / .seconds(1)))
            }
        case .wait(.nextNavigation) where navigation:
            trigger = "navigation"
        default:
            record(staged, decision.description, at: t, wake: wake)
            return Step(decision: decision, switched: nil, wake: wake)
        }
        if let until = state.withLock({ $0.failedUntil }), until > t {
            return Step(decision: decision, switched: nil, wake: until)
        }
        do {
            try await updater.switchStaged(staged.version, trigger: trigger, reload: !navigation)
        } catch {
            state.withLock { $0.failedUntil = t.addingTimeInterval(Self.retryAfterFailure) }
            let retry = t.addingTimeInterval(Self.retryAfterFailure)
            record(staged, "the switch failed, trying again at \(RFC3339Time.string(from: retry)): \(error)", at: t, wake: retry)
            return Step(decision: decision, switched: nil, wake: retry)
        }
        state.withLock { s in
            s.switched.insert(staged.version)
            s.failedUntil = nil
            s.written = nil
            s.waitsForNavigation = false
        }
        ApplyStatus.remove(updater.layout)
        return Step(decision: decision, switched: staged.version, wake: nil)
    }

    /// How many decisions the driver made since it was made: what shows that it sleeps when
    /// nothing changes.
    package var decisions: Int { state.withLock { $0.steps } }

    /// Leases held now (expired ones are dropped at the next decision).
    package var leaseCount: Int { state.withLock { $0.leases.count } }

    /// True when the last decision would let a navigation switch (the staged version waits
    /// for one, or may switch now): a host then holds a top-level navigation back for
    /// ``navigated()``. Cheap: no file is read.
    package var waitsForNavigation: Bool { state.withLock { $0.waitsForNavigation } }

    /// The page navigates (a top-level navigation): a version that waits for it, or whose
    /// switch is allowed now, takes over. Returns the version switched to, if any.
    package func navigated() async -> String? {
        await step(navigation: true).switched
    }

    /// Decides until the task is cancelled: at each wake-up and at the next instant the
    /// answer can change (at most ``maxSleep`` apart).
    package func run() async {
        while !Task.isCancelled {
            let wake = await step().wake
            var sleep = Self.maxSleep
            if let wake {
                let seconds = max(0.05, wake.timeIntervalSince(now()))
                sleep = min(sleep, .milliseconds(Int64(min(seconds, 86_400) * 1000)))
            }
            await signal.wait(upTo: sleep)
        }
    }

    /// Writes the status line when it changed (at most every 10 s while only its times move).
    private func record(_ staged: StagedSwitch, _ line: String, at t: Date, wake: Date?) {
        let write = state.withLock { s -> Bool in
            if let written = s.written, written.line == line || Self.sameKind(written.line, line) && t.timeIntervalSince(written.at) < 10 {
                return false
            }
            s.written = (line, t)
            return true
        }
        guard write else { return }
        ApplyStatus(
            version: staged.version, line: line, policy: staged.policy.summary, decidedAt: t, nextDecision: wake,
            pid: getpid()
        ).write(updater.layout)
    }

    /// Two lines that differ only in their times (`… (at 2026-…)`).
    private static func sameKind(_ a: String, _ b: String) -> Bool {
        a.prefix { $0 != "(" } == b.prefix { $0 != "(" }
    }
}

/// A wake-up that is not lost when it comes before the wait: ``wait(upTo:)`` returns at
/// once after a ``wake()`` it has not consumed yet.
final class WakeSignal: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
    }
    private let state = Mutex(State())

    func wake() {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            if let w = s.waiter {
                s.waiter = nil
                return w
            }
            s.pending = true
            return nil
        }
        waiter?.resume()
    }

    /// Returns after a wake-up, after `duration`, or when the task is cancelled.
    func wait(upTo duration: Duration) async {
        let timer = Task { [weak self] in
            // Cancelled (the wait ended first): no wake-up, else the next wait would end at
            // once and the driver would spin.
            do { try await Task.sleep(for: duration) } catch { return }
            self?.wake()
        }
        defer { timer.cancel() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { s -> Bool in
                    if s.pending {
                        s.pending = false
                        return true
                    }
                    s.waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            wake()
        }
    }
}

extension ApplyDecision {
    /// True for `.switchNow`.
    var isSwitch: Bool {
        if case .switchNow = self { return true }
        return false
    }
}

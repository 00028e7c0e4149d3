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
/// injected clocks. Durations — idle time, leases, the wait after a failed switch — are kept
/// on the monotonic clock and projected onto the wall clock only for the decision, so a wall
/// clock that jumps (by seconds or by years, either way) never shortens or lengthens them;
/// the wall clock is read for what is wall-clock by nature (windows, deadlines, timestamps).
/// A jump is noticed at the next decision (the two clocks disagree) and said in the status.
/// It decides again when the host wakes it (a new version staged, a trial ended, a lease
/// released, a navigation) and at `ApplyDecision.nextWake(_:now:)`, at least every
/// ``maxSleep``. Input does not wake it: input only ever delays a switch.
package final class ApplyDriver: Sendable {
    /// The longest lease a page may hold at once (it may renew).
    package static let maxLeaseSeconds: Double = 600
    /// The most leases held at once (pages of one host).
    package static let maxLeases = 64
    /// The longest wait between two decisions.
    package static let maxSleep: Duration = .seconds(30)
    /// After a switch that failed, the wait before trying again.
    package static let retryAfterFailure: TimeInterval = 60

    /// The two clocks disagreeing by more than this between decisions is a jump of the wall clock.
    package static let jumpTolerance: TimeInterval = 2
    /// How long (monotonic) the status keeps saying that the wall clock jumped.
    package static let jumpShownFor: Duration = .seconds(86_400)

    private let updater: Updater
    private let windows: [MaintenanceWindow]
    private let now: @Sendable () -> Date
    private let monotonic: @Sendable () -> Duration
    /// True when the host puts a new version on screen itself (the shell); false when a
    /// page must do it (`serve`: the page's shim switches when ``allowedSwitch`` says so).
    private let switchesInPlace: Mutex<Bool>
    private let signal = WakeSignal()

    /// Every duration on the monotonic clock (time since the driver's clock origin).
    private struct State {
        /// Decisions made so far (``decisions``).
        var steps = 0
        var hostStarted: Duration
        var lastInput: Duration?
        /// Each lease's end.
        var leases: [String: Duration] = [:]
        /// Checks downloading now, whoever started them (the schedule, a page, the shell's bridge).
        var downloads = 0
        var switched: Set<String> = []
        var failedUntil: Duration?
        var written: (line: String, at: Duration)?
        /// The two clocks at the last decision, and the last jump of the wall clock seen.
        var lastReading: (wall: Date, monotonic: Duration)?
        var jump: (seconds: TimeInterval, at: Date, seen: Duration)?
        var waitsForNavigation = false
        /// `serve`: the staged version the policy lets a page switch to now, and why.
        var allowed: (version: String, trigger: String)?
    }
    private let state: Mutex<State>

    /// A driver for `updater`'s root.
    /// - Parameters:
    ///   - windows: the device's maintenance windows (config `applyWindows`, read in its zone).
    ///   - now: the wall clock.
    ///   - monotonic: the monotonic clock, as time since any fixed origin (default:
    ///     `ContinuousClock`, which no setting of the system's time moves).
    package init(
        updater: Updater, windows: [MaintenanceWindow], now: @escaping @Sendable () -> Date = { Date() },
        monotonic: (@Sendable () -> Duration)? = nil
    ) {
        self.updater = updater
        self.windows = windows
        self.now = now
        let clock = monotonic ?? Self.continuous()
        self.monotonic = clock
        self.switchesInPlace = Mutex(true)
        self.state = Mutex(State(hostStarted: clock()))
    }

    /// Time since now on `ContinuousClock`.
    private static func continuous() -> @Sendable () -> Duration {
        let origin = ContinuousClock.now
        return { origin.duration(to: ContinuousClock.now) }
    }

    /// A duration in seconds.
    private static func seconds(_ d: Duration) -> TimeInterval {
        let (s, a) = d.components
        return TimeInterval(s) + TimeInterval(a) / 1e18
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
        let m = monotonic()
        state.withLock { $0.lastInput = m }
    }

    /// A page holds the switch back for `seconds` (at most ``maxLeaseSeconds``; 0 or less
    /// releases `lease`). Returns when the lease ends.
    @discardableResult
    package func hold(lease: String, seconds: Double) -> Date {
        let t = now()
        let m = monotonic()
        let held = min(max(seconds.isFinite ? seconds : 0, 0), Self.maxLeaseSeconds)
        state.withLock { s in
            if held > 0 { s.leases[lease] = m + .milliseconds(Int64(held * 1000)) } else { s.leases[lease] = nil }
            // Bounded whatever a page posts: past the cap the lease ending first goes.
            while s.leases.count > Self.maxLeases, let first = s.leases.min(by: { $0.value < $1.value })?.key { s.leases[first] = nil }
        }
        signal.wake()
        return t.addingTimeInterval(held)
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

    /// The input of a decision about `staged` at wall time `t` and monotonic time `m`,
    /// expired leases dropped: the host's start, the last input and the leases' ends, kept on
    /// the monotonic clock, are placed on the wall clock as seen from `t`, so their durations
    /// are the monotonic clock's whatever the wall clock did meanwhile.
    private func input(_ staged: StagedSwitch, at t: Date, _ m: Duration) -> ApplyInput {
        state.withLock { s in
            s.leases = s.leases.filter { $0.value > m }
            let onWall = { (d: Duration) in t.addingTimeInterval(Self.seconds(d - m)) }
            return ApplyInput(
                policy: staged.policy, stagedAt: staged.since ?? t, hostStartedAt: onWall(s.hostStarted), windows: windows,
                lastInput: s.lastInput.map(onWall), leaseUntil: s.leases.values.max().map(onWall), trialRunning: staged.trialRunning,
                downloading: s.downloads > 0, alreadySwitched: s.switched.contains(staged.version))
        }
    }

    /// Notes the two clocks at a decision: a wall clock that moved more or less than the
    /// monotonic one since the last decision jumped.
    private func read(wall t: Date, monotonic m: Duration) {
        state.withLock { s in
            if let last = s.lastReading {
                let drift = t.timeIntervalSince(last.wall) - Self.seconds(m - last.monotonic)
                if abs(drift) > Self.jumpTolerance { s.jump = (drift, t, m) }
            }
            s.lastReading = (t, m)
            if let jump = s.jump, m - jump.seen > Self.jumpShownFor { s.jump = nil }
        }
    }

    /// What the status says of the last jump of the wall clock, if one was seen lately.
    package var clockNote: String? {
        state.withLock { s in
            s.jump.map { jump in
                "the wall clock jumped by \(Self.signed(jump.seconds)) at \(RFC3339Time.string(from: jump.at)); "
                    + "idle time, leases and retries go by the monotonic clock"
            }
        }
    }

    /// `+1d 2h`, `−30s`: a jump's size.
    static func signed(_ seconds: TimeInterval) -> String {
        (seconds < 0 ? "−" : "+") + DurationText.render(seconds: Int(abs(seconds).rounded()))
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
        let t = now()
        let m = monotonic()
        read(wall: t, monotonic: m)
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
        let input = input(staged, at: t, m)
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
        if let until = state.withLock({ $0.failedUntil }), until > m {
            return Step(decision: decision, switched: nil, wake: t.addingTimeInterval(Self.seconds(until - m)))
        }
        do {
            try await updater.switchStaged(staged.version, trigger: trigger, reload: !navigation)
        } catch {
            state.withLock { $0.failedUntil = m + .seconds(Self.retryAfterFailure) }
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
    private func record(_ staged: StagedSwitch, _ decided: String, at t: Date, wake: Date?) {
        let m = monotonic()
        let clock = clockNote
        let line = clock.map { decided + "; " + $0 } ?? decided
        let write = state.withLock { s -> Bool in
            if let written = s.written, written.line == line || Self.sameKind(written.line, line) && m - written.at < .seconds(10) {
                return false
            }
            s.written = (line, m)
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

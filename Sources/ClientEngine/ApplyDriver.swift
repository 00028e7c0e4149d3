import ApplyPolicy
import ClientUpdater
import Foundation
import Synchronization

/// Switches a host to its staged version when the version's apply policy allows it
/// (docs/apply-policies.md): the thin executor of ``ApplyMachine``, the one place that feeds
/// it what a running host knows — the last user input, the page's leases, a download or a
/// trial — and carries out what it answers.
///
/// It holds no rule of its own: each event goes to the machine with the two injected clocks
/// read once, and the machine's actions are carried out here (a switch through the updater,
/// `apply-status.json`, one timer). The staged version and its verified policy are read when
/// the root changed (`state.json` replaced, a check ended, the host woke it), not at every
/// decision. It decides again when the host wakes it (a new version staged, a trial ended, a
/// lease released, a navigation) and at `ApplyDecision.nextWake(_:now:)`, at least every
/// ``maxSleep``. Input does not wake it: input only ever delays a switch.
package final class ApplyDriver: Sendable {
    /// The longest lease a page may hold at once (it may renew).
    package static let maxLeaseSeconds = ApplyMachine.maxLeaseSeconds
    /// The most leases held at once (pages of one host).
    package static let maxLeases = ApplyMachine.maxLeases
    /// The longest wait between two decisions.
    package static let maxSleep: Duration = .seconds(ApplyMachine.maxSleep)
    /// After a switch that failed, the wait before trying again.
    package static let retryAfterFailure = ApplyMachine.retryAfterFailure

    private let updater: Updater
    private let now: @Sendable () -> Date
    private let monotonic: @Sendable () -> Duration
    private let signal = WakeSignal()
    private let machine: Mutex<ApplyMachine>
    /// The staged version as last read, and the `state.json` it was read from.
    private let staged = Mutex<StagedRead>(StagedRead())
    private struct StagedRead {
        var stamp: FileStamp?
        var stale = true
        var reads = 0
    }

    /// A driver for `updater`'s root.
    /// - Parameters:
    ///   - windows: the device's maintenance windows (config `applyWindows`, read in its zone).
    ///   - now: the device's time (docs/device-time.md).
    ///   - monotonic: the monotonic clock, as time since any fixed origin (default:
    ///     `ContinuousClock`, which no setting of the system's time moves).
    package init(
        updater: Updater, windows: [MaintenanceWindow], now: @escaping @Sendable () -> Date = { Date() },
        monotonic: (@Sendable () -> Duration)? = nil
    ) {
        self.updater = updater
        self.now = now
        let clock = monotonic ?? Self.continuous()
        self.monotonic = clock
        self.machine = Mutex(ApplyMachine(windows: windows, started: clock()))
    }

    /// Time since now on `ContinuousClock`.
    private static func continuous() -> @Sendable () -> Duration {
        let origin = ContinuousClock.now
        return { origin.duration(to: ContinuousClock.now) }
    }

    /// The two clocks, read once.
    private func clocks() -> ApplyMachine.Clocks { ApplyMachine.Clocks(wall: now(), monotonic: monotonic()) }

    /// Hands `event` to the machine (the clocks read once) and returns its actions.
    private func send(_ event: ApplyMachine.Event) -> [ApplyMachine.Action] {
        let at = clocks()
        return machine.withLock { $0.handle(event, at: at) }
    }

    /// `serve`: the host cannot put a version on screen, a page must. From now on a
    /// switch the policy allows waits for a page's shim (``allowedSwitch()``, ``switchForPage(from:)``),
    /// a navigation or the next start: a page that asks is alive, so its trial has a page.
    package func switchThroughPages() { _ = send(.switchThroughPages) }

    /// The staged version a page may switch to now, when the policy allows it and the host
    /// switches through its pages. None while a check downloads.
    package func allowedSwitch() -> String? { machine.withLock { $0.allowedSwitch } }

    /// A page asks to switch (its shim saw ``allowedSwitch()``, or the page's own
    /// `switchToPendingVersion()`): with the policy's trigger when it allows the switch,
    /// else as asked. `pageVersion`: the version the page was served with.
    package func switchForPage(from pageVersion: String?) async throws -> LifecycleReport {
        let allowed = machine.withLock { m in m.allowedTrigger.map { (version: m.allowedSwitch ?? "", trigger: $0) } }
        let report: LifecycleReport
        if let allowed {
            report = try await updater.switchStaged(allowed.version, trigger: allowed.trigger, from: pageVersion)
        } else {
            report = try await updater.reload(from: pageVersion)
        }
        perform(send(.pageSwitched(allowed: allowed?.version)))
        return report
    }

    /// The user did something (a key, the pointer, a touch): idle time starts again.
    package func noteInput() { _ = send(.input) }

    /// A page holds the switch back for `seconds` (at most ``maxLeaseSeconds``; 0 or less
    /// releases `lease`). Returns when the lease ends.
    @discardableResult
    package func hold(lease: String, seconds: Double) -> Date {
        let t = now()
        _ = send(.hold(lease: lease, seconds: seconds))
        signal.wake()
        return t.addingTimeInterval(min(max(seconds.isFinite ? seconds : 0, 0), Self.maxLeaseSeconds))
    }

    /// Ends every lease whose id starts with `prefix` (all when empty): their page, web
    /// process or host is gone.
    package func releaseLeases(prefix: String = "") {
        _ = send(.release(prefix: prefix))
        signal.wake()
    }

    /// Runs `check` as a download: no switch while it runs, and a decision once it ended
    /// (on the staged version read again: the check may have staged one). Checks may
    /// overlap (a page's beside the periodic one): each counts until it ends.
    package func whileDownloading<T: Sendable>(_ check: () async throws -> T) async rethrows -> T {
        _ = send(.downloadStarted)
        signal.wake()
        defer {
            _ = send(.downloadEnded)
            wake()
        }
        return try await check()
    }

    /// Checks downloading now.
    package var downloadCount: Int { machine.withLock { $0.downloads } }

    /// Something changed that may allow a switch (a version staged, a trial ended): the
    /// staged version is read again at the next decision.
    package func wake() {
        staged.withLock { $0.stale = true }
        signal.wake()
    }

    /// What the status says of the last jump of the wall clock, if one was seen lately.
    package var clockNote: String? { machine.withLock { $0.clockNote } }

    /// What one ``step(navigation:)`` decided and did.
    package struct Step: Sendable, Equatable {
        /// The answer; nil when nothing is staged.
        package var decision: ApplyDecision?
        /// The version switched to in this step, if it switched.
        package var switched: String?
        /// When to decide again at the latest (nil: only when woken).
        package var wake: Date?
    }

    /// The staged version, read and verified again only when the root changed since the
    /// last read (`state.json` replaced: a check staged, a trial started or ended, another
    /// process switched) or the host woke the driver; else the machine keeps the last one.
    private func refreshStaged() {
        let stamp = FileStamp(updater.layout.state)
        let due = staged.withLock { s in
            defer {
                s.stale = false
                s.stamp = stamp
            }
            return s.stale || s.stamp != stamp
        }
        guard due else { return }
        staged.withLock { $0.reads += 1 }
        _ = send(.staged(updater.stagedSwitch()))
    }

    /// How many times the staged version and its policy were read: what shows that
    /// decisions do not read the root again.
    package var stagedReads: Int { staged.withLock { $0.reads } }

    /// Decides once and switches when the answer says so. With `navigation` (the page
    /// navigates), a version that waits for the next navigation switches too, and the host
    /// need not reload (the navigation loads it).
    @discardableResult
    package func step(navigation: Bool = false) async -> Step {
        refreshStaged()
        var actions = send(.decide(navigation: navigation))
        var switched: String?
        if case .switchTo(let version, let trigger, let reload)? = actions.first {
            do {
                try await updater.switchStaged(version, trigger: trigger, reload: reload)
                actions = send(.switched(version: version))
                switched = version
            } catch {
                actions = send(.switchFailed(version: version, message: "\(error)"))
            }
            // The switch changed the root: read it again at the next decision.
            staged.withLock { $0.stale = true }
        }
        let wake = perform(actions)
        return Step(decision: machine.withLock { $0.lastDecision }, switched: switched, wake: wake)
    }

    /// Carries out the machine's actions; returns the time it asked to decide again at.
    @discardableResult
    private func perform(_ actions: [ApplyMachine.Action]) -> Date? {
        var wake: Date?
        for action in actions {
            switch action {
            case .writeStatus(let version, let line, let policy, let decidedAt, let next):
                ApplyStatus(version: version, line: line, policy: policy, decidedAt: decidedAt, nextDecision: next, pid: getpid())
                    .write(updater.layout)
            case .removeStatus:
                ApplyStatus.remove(updater.layout)
            case .wakeAt(let at):
                wake = at
            case .switchTo:
                break  // only ever first, carried out by step(navigation:)
            }
        }
        return wake
    }

    /// How many decisions the driver made since it was made: what shows that it sleeps when
    /// nothing changes.
    package var decisions: Int { machine.withLock { $0.decisions } }

    /// Leases held now (expired ones are dropped at the next decision).
    package var leaseCount: Int { machine.withLock { $0.leaseCount } }

    /// True when the last decision would let a navigation switch (the staged version waits
    /// for one, or may switch now): a host then holds a top-level navigation back for
    /// ``navigated()``. Cheap: no file is read.
    package var waitsForNavigation: Bool { machine.withLock { $0.waitsForNavigation } }

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

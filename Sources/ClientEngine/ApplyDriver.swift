import ApplyPolicy
import ClientFoundation
import ClientUpdater
import Foundation
import Synchronization

/// Switches a host to its staged version when the version's apply policy allows it
/// (docs/apply-policies.md): the thin executor of `ApplyMachine`, the one place that feeds
/// it what a running host knows (the last user input, the page's leases, a download, a
/// trial) and carries out every action it answers.
///
/// It holds no rule of its own: each event goes to the machine with the device's time and
/// the injected monotonic clock read once, and the machine's actions are carried out here (a
/// switch through the updater, `apply-status.json`, one timer). The staged version and its
/// verified policy are read when the root changed (`state.json` replaced, a check ended,
/// the host woke it), not at every decision. It decides again when the host wakes it and
/// after the duration the machine asks for, at least every `ApplyMachine.maxSleep`. Input
/// does not wake it: input only ever delays a switch.
///
/// One switch at a time: the machine starts at most one, and a navigation or a page's call
/// that arrives meanwhile waits for that switch's outcome and answers with it.
package final class ApplyDriver: Sendable {
    /// The longest lease a page may hold at once (it may renew).
    package static let maxLease = ApplyMachine.maxLease
    /// The most leases held at once (pages of one host).
    package static let maxLeases = ApplyMachine.maxLeases

    private let updater: Updater
    private let now: @Sendable () -> Date
    private let clock: MonotonicClock
    private let signal: WakeSignal
    /// The machine and the switch in flight, changed together.
    private let locked: Mutex<Locked>
    private struct Locked {
        var machine: ApplyMachine
        var flight: SwitchFlight?
    }
    /// Whoever watches the machine's events (``changes()``), by watch.
    private let watchers = Mutex<[Int: AsyncStream<Void>.Continuation]>([:])
    private let nextWatcher = Mutex(0)
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
    ///   - clock: the monotonic clock its durations and timers go by.
    package init(
        updater: Updater, windows: [MaintenanceWindow], now: @escaping @Sendable () -> Date = { Date() },
        clock: MonotonicClock = .continuous
    ) {
        self.updater = updater
        self.now = now
        self.clock = clock
        self.signal = WakeSignal(clock: clock)
        self.locked = Mutex(Locked(machine: ApplyMachine(windows: windows, started: clock.now)))
    }

    /// Hands `event` to the machine (the clocks read once): its actions, and the switch in
    /// flight after it (a new one when the event started a switch).
    private func send(_ event: ApplyMachine.Event) -> (actions: [ApplyMachine.Action], flight: SwitchFlight?) {
        let at = ApplyMachine.Clocks(wall: now(), monotonic: clock.now)
        let sent = locked.withLock { l -> (actions: [ApplyMachine.Action], flight: SwitchFlight?) in
            let actions = l.machine.handle(event, at: at)
            if actions.contains(where: \.startsSwitch) {
                l.flight = SwitchFlight()
            } else if !l.machine.isSwitching {
                l.flight = nil
            }
            return (actions, l.flight)
        }
        for watcher in watchers.withLock({ Array($0.values) }) { watcher.yield() }
        return sent
    }

    /// An element after each event the machine handled (a decision, a download's start or
    /// end, a switch's outcome), from the call on; several close together may come as one.
    /// For tests: what the driver decides (``allowedSwitch()``, a status) is read again at
    /// each element instead of polled. The stream ends when its consumer drops it.
    package func changes() -> AsyncStream<Void> {
        let id = nextWatcher.withLock {
            $0 += 1
            return $0
        }
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        continuation.onTermination = { [weak self] _ in _ = self?.watchers.withLock { $0.removeValue(forKey: id) } }
        watchers.withLock { $0[id] = continuation }
        return stream
    }

    /// `serve`: the host cannot put a version on screen, a page must. From now on a
    /// switch the policy allows waits for a page's shim (``allowedSwitch()``, ``switchForPage(from:)``),
    /// a navigation or the next start: a page that asks is alive, so its trial has a page.
    package func switchThroughPages() { _ = send(.switchThroughPages) }

    /// The staged version a page may switch to now, when the policy allows it and the host
    /// switches through its pages. None while a check downloads.
    package func allowedSwitch() -> String? { locked.withLock { $0.machine.allowedSwitch } }

    /// A page asks to switch (its shim saw ``allowedSwitch()``, or the page's own
    /// `switchToPendingVersion()`): with the policy's trigger when it allows the switch,
    /// else as asked; while a switch is in flight, its outcome. `pageVersion`: the version
    /// the page was served with.
    package func switchForPage(from pageVersion: String?) async throws -> LifecycleReport {
        let (actions, flight) = send(.pageAsks)
        for action in actions {
            switch action {
            case .joinSwitch:
                guard let joined = try await flight?.value().report else { break }
                return joined
            case .switchForPage(let version, let trigger):
                guard let flight else { break }
                let report: LifecycleReport
                do {
                    if let version, let trigger {
                        report = try await updater.switchStaged(version, trigger: trigger, from: pageVersion)
                    } else {
                        report = try await updater.reload(from: pageVersion)
                    }
                } catch {
                    // Refused (the page was served another version, nothing is pending any
                    // more): the page hears why, the machine is where it was, and the root
                    // is read again before the next decision.
                    _ = await perform(send(.pageRefused).actions)
                    staged.withLock { $0.stale = true }
                    flight.resolve(.failure(error))
                    signal.wake()
                    throw error
                }
                _ = await perform(send(.switched(version: version)).actions)
                staged.withLock { $0.stale = true }
                flight.resolve(.success(SwitchOutcome(version: version, report: report)))
                signal.wake()
                return report
            case .writeStatus, .removeStatus, .wake, .switchTo:
                continue
            }
        }
        // The switch it joined found the root changed under it: the page's own reload now.
        return try await switchForPage(from: pageVersion)
    }

    /// The user did something (a key, the pointer, a touch): idle time starts again.
    package func noteInput() { _ = send(.input) }

    /// A page holds the switch back for `duration` (at most ``maxLease``; zero releases
    /// `lease`). Returns when the lease ends, on the device's time.
    @discardableResult
    package func hold(lease: String, for duration: Duration) -> Date {
        let t = now()
        let held = ApplyMachine.leaseLength(duration)
        _ = send(.hold(lease: lease, duration: held))
        signal.wake()
        return t.addingTimeInterval(held.inSeconds)
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
    package var downloadCount: Int { locked.withLock { $0.machine.downloads } }

    /// Something changed that may allow a switch (a version staged, a trial ended): the
    /// staged version is read again at the next decision.
    package func wake() {
        staged.withLock { $0.stale = true }
        signal.wake()
    }

    /// What the status says of the last jump of the wall clock, if one was seen lately.
    package var clockNote: ApplyStatusFacts.ClockJump? { locked.withLock { $0.machine.clockNote } }

    /// What one ``step(navigation:)`` decided and did.
    package struct Step: Sendable, Equatable {
        /// The answer; nil when nothing is staged (or a switch was in flight).
        package var decision: ApplyDecision?
        /// The version switched to in this step (or by the switch it joined), if it switched.
        package var switched: String?
        /// How long until the next decision at the latest, on the monotonic clock (nil:
        /// only when woken).
        package var sleep: Duration?
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

    /// Decides once and carries out the answer: a switch when the policy allows it, or the
    /// outcome of the switch in flight when `navigation` joins it. With `navigation` (the
    /// page navigates), a version that waits for the next navigation switches too, and the
    /// host need not reload (the navigation loads it).
    @discardableResult
    package func step(navigation: Bool = false) async -> Step {
        refreshStaged()
        let (actions, flight) = send(.decide(navigation: navigation))
        var step = await perform(actions, flight: flight)
        step.decision = locked.withLock { $0.machine.lastDecision }
        return step
    }

    /// Carries out the machine's actions in order.
    private func perform(_ actions: [ApplyMachine.Action], flight: SwitchFlight? = nil) async -> Step {
        var step = Step()
        for action in actions {
            switch action {
            case .switchTo(let version, let trigger, let reload):
                guard let flight else { continue }
                step.switched = await carryOut(version: version, trigger: trigger, reload: reload, flight: flight)
            case .joinSwitch:
                step.switched = try? await flight?.value().version
            case .switchForPage:
                break  // only ever the answer to a page's call (switchForPage(from:))
            case .writeStatus(let facts):
                ApplyStatus(facts, pid: getpid()).write(updater.layout)
            case .removeStatus:
                ApplyStatus.remove(updater.layout)
            case .wake(let after):
                step.sleep = after
            }
        }
        return step
    }

    /// The switch the machine started: its outcome goes back to the machine, then to
    /// whoever joined it. Returns the version switched to, if it switched.
    private func carryOut(version: String, trigger: String, reload: Bool, flight: SwitchFlight) async -> String? {
        var outcome: Result<SwitchOutcome, any Error>
        let after: [ApplyMachine.Action]
        do {
            let report = try await updater.switchStaged(version, trigger: trigger, reload: reload)
            outcome = .success(SwitchOutcome(version: version, report: report))
            after = send(.switched(version: version)).actions
        } catch let error as UpdaterError where error.code == .conflict {
            // Another process switched first, or the version is no longer pending: nothing
            // failed here, the root changed.
            outcome = .success(SwitchOutcome(version: nil, report: nil))
            after = send(.switchSuperseded).actions
        } catch {
            outcome = .failure(error)
            after = send(.switchFailed(version: version, message: "\(error)")).actions
        }
        // The switch changed the root: read it again at the next decision.
        staged.withLock { $0.stale = true }
        flight.resolve(outcome)
        _ = await perform(after)
        return (try? outcome.get())?.version
    }

    /// How many decisions the driver made since it was made: what shows that it sleeps when
    /// nothing changes.
    package var decisions: Int { locked.withLock { $0.machine.decisions } }

    /// Callers waiting for the switch in flight (a navigation, a page's call).
    package var joined: Int { locked.withLock { $0.flight?.waiting ?? 0 } }

    /// Returns once `count` callers wait for the switch in flight (for tests), once it
    /// ended, or on cancellation; at once when no switch is in flight.
    package func waitForJoined(_ count: Int) async {
        await locked.withLock { $0.flight }?.waitForWaiters(count)
    }

    /// Leases held now (expired ones are dropped at the next decision).
    package var leaseCount: Int { locked.withLock { $0.machine.leaseCount } }

    /// True when a navigation now switches or joins a switch (the staged version waits for
    /// one, its switch is allowed, or a switch is in flight): a host then holds a top-level
    /// navigation back for ``navigated()``. Cheap: no file is read.
    package var waitsForNavigation: Bool { locked.withLock { $0.machine.waitsForNavigation } }

    /// The page navigates (a top-level navigation): a version that waits for it, or whose
    /// switch is allowed now, takes over, or the switch in flight ends first. Returns the
    /// version switched to, if any.
    package func navigated() async -> String? {
        await step(navigation: true).switched
    }

    /// Decides until the task is cancelled: at each wake-up and after the duration each
    /// answer asks for (at most `ApplyMachine.maxSleep` apart), on the injected clock.
    package func run() async {
        while !Task.isCancelled {
            let sleep = await step().sleep ?? ApplyMachine.maxSleep
            await signal.wait(upTo: min(max(sleep, .milliseconds(50)), ApplyMachine.maxSleep))
        }
    }
}

extension ApplyMachine.Action {
    /// True for an action that puts a switch in flight.
    fileprivate var startsSwitch: Bool {
        switch self {
        case .switchTo, .switchForPage: return true
        case .joinSwitch, .writeStatus, .removeStatus, .wake: return false
        }
    }
}

extension ApplyStatus {
    /// `apply-status.json` for `facts`, written by the host process `pid`.
    init(_ facts: ApplyStatusFacts, pid: Int32) {
        self.init(
            version: facts.version, line: facts.line, policy: facts.policy, decidedAt: facts.decidedAt,
            nextDecision: facts.nextDecision, pid: pid)
    }
}

/// What a switch in flight ended with: the version switched to and the updater's report,
/// both nil when the root changed under it (nothing switched, nothing failed).
struct SwitchOutcome: Sendable {
    var version: String?
    var report: LifecycleReport?
}

/// The one switch in flight: whoever joins it waits for its outcome (a navigation, a page's
/// call), which ``ApplyDriver`` tells once; a joiner whose task is cancelled stops waiting.
typealias SwitchFlight = Handshake<SwitchOutcome>

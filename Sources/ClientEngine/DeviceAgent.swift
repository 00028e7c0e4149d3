import ApplyPolicy
import ClientFoundation
import ClientUpdater
import DeviceSetup
import Foundation
import ServiceLifecycle
import Synchronization

/// The one host loop of a device root (`clientctl serve`, the native shell, an embedding
/// host): starts the engine, hands every event to any number of sinks, keeps the
/// supervisor (systemd) told, checks for updates periodically and shuts down in order.
///
/// It is a swift-service-lifecycle `Service` and ``run()`` is all there is to start and
/// stop it: it starts the engine, checks periodically until its `ServiceGroup` shuts down
/// gracefully (SIGTERM) or its task is cancelled, then says `STOPPING=1` and shuts the
/// updater down. A host runs it in the group ``DeviceHost`` builds, beside its server:
///
/// ```swift
/// let agent = DeviceAgent(engine, sinks: [{ event in print(event) }], bridge: myBridge, checkEvery: .seconds(3600))
/// let host = DeviceHost(agent, services: [.afterStartup(myServer)], stopsOnSignals: true)
/// try await host.run()
/// ```
///
/// ``startedUp()`` waits for the end of start-up (the served version chosen). A host whose
/// own loop owns the main thread (the GTK shell) runs the group in a task and calls
/// ``DeviceHost/shutDown()`` when its loop ends. Either way the host adds its sinks
/// (stderr lines, the page), says when it is ready (`SupervisorStatus.ready(_:)` on
/// ``supervisor``) and beats its own watchdog (`SupervisorStatus.watchdog()`). The calls of
/// the updater it does not make (acknowledging a start-up, switching to a pending version,
/// rolling back) stay the host's, on ``updater``.
public final class DeviceAgent: Service, Sendable {
    /// Receives every event of the updater, in order, on the agent's forwarding task;
    /// it must not block (hand slow work to a queue or task of its own).
    public typealias Sink = @Sendable (UpdaterEvent) -> Void

    /// The engine's updater (``DeviceEngine/updater``): the host's own calls go to it.
    public let updater: Updater
    /// What systemd hears; it follows every event before the sinks get it.
    public let supervisor: SupervisorStatus
    /// Switches to a staged version when its apply policy allows (docs/apply-policies.md);
    /// the host tells it of input, leases and navigations.
    package let apply: ApplyDriver
    /// Who holds the device's downloads back (docs/download-policy.md#holds): the host takes
    /// the page's leases here and ends them with the page.
    package let downloadHolds: DownloadHolds
    /// The page's problems after its acknowledgement (docs/page-errors.md): the host tells
    /// it of acknowledgements, errors and web process deaths; the agent reports them.
    package let pageProblems: PageProblems
    private let sinks: [Sink]
    /// Sends the root's fleet reports in the background (nil without a report URL).
    private let reports: ReportSender?
    /// The host's web view: the folder to serve, reloading it.
    private let bridge: any HostBridge
    private let checks: Checks
    /// When the next periodic check runs: a requested check that ends deferred moves it.
    private let nextCheck: NextCheck
    /// The periodic checks: their interval, when the first may run, what a failure does.
    private struct Checks: Sendable {
        let interval: Duration
        let first: (@Sendable () async -> Void)?
        let failed: @Sendable (any Error) -> Void
        /// The device's time, against which a deferred download's moment is read.
        let now: @Sendable () -> Date
    }
    private let started: @Sendable (LifecycleReport) async throws -> Void
    /// The monotonic clock of the agent's timers and of the watchdog it starts.
    private let clock: MonotonicClock
    /// Start-up's report once ``run()`` has started the engine, or what ended it first.
    private let startup = Handshake<LifecycleReport>()
    /// ``run()`` was called.
    private let ran = Mutex(false)

    /// An agent for the engine's updater; nothing runs until ``run()``.
    /// - Parameters:
    ///   - engine: an engine opened by ``DeviceEngine/open(root:options:)``.
    ///   - supervisor: by default the one `NOTIFY_SOCKET` names (nothing outside systemd).
    ///   - sinks: called in this order for each event.
    ///   - bridge: the host's web view: the folder to serve, reloading it.
    ///   - interval: the interval of periodic checks (`.zero`: only when the page asks).
    ///   - firstCheck: returns when the first periodic check may run (the shell: once the
    ///     client is on screen); nil: one interval after start-up.
    ///   - started: called once start-up has ended (its report), before the first check;
    ///     throwing from it ends the agent with that error.
    ///   - checkFailed: a failed periodic check (its `error` event has reached the sinks).
    ///
    /// When the root names a report URL (docs/fleet-reports.md#delivery), the agent also
    /// delivers its fleet reports: a low-priority task sends them within seconds of each
    /// event, on the root's transport; it never delays a check or a trial.
    public convenience init(
        _ engine: DeviceEngine, supervisor: SupervisorStatus = SupervisorStatus(), sinks: [Sink] = [], bridge: any HostBridge,
        checkEvery interval: Duration, firstCheck: (@Sendable () async -> Void)? = nil,
        started: @escaping @Sendable (LifecycleReport) async throws -> Void = { _ in },
        checkFailed: @escaping @Sendable (any Error) -> Void = { _ in }
    ) {
        self.init(
            engine, supervisor: supervisor, sinks: sinks, bridge: bridge, checkEvery: interval, firstCheck: firstCheck, started: started,
            checkFailed: checkFailed, clock: engine.monotonic)
    }

    /// The agent the public initializer makes, its timers on `clock` (the public one gives
    /// the engine's, ``DeviceEngine/monotonic``; a test may give another): the periodic
    /// checks, the watchdog's start-up timer, the apply driver and the page's problems.
    package init(
        _ engine: DeviceEngine, supervisor: SupervisorStatus = SupervisorStatus(), sinks: [Sink] = [], bridge: any HostBridge,
        checkEvery interval: Duration, firstCheck: (@Sendable () async -> Void)? = nil,
        started: @escaping @Sendable (LifecycleReport) async throws -> Void = { _ in },
        checkFailed: @escaping @Sendable (any Error) -> Void = { _ in }, clock: MonotonicClock
    ) {
        self.updater = engine.updater
        self.supervisor = supervisor
        self.reports = engine.reportSender()
        self.sinks = sinks
        self.apply = Self.applyDriver(engine, clock: clock)
        self.downloadHolds = engine.downloadHolds
        self.pageProblems = PageProblems(updater: engine.updater, clock: clock, allowRollback: engine.config.deviceSettings.errorRollback)
        self.bridge = bridge
        self.checks = Checks(interval: interval, first: firstCheck, failed: checkFailed, now: engine.now)
        self.nextCheck = NextCheck(clock: clock)
        self.started = started
        self.clock = clock
    }

    /// Runs the agent until its `ServiceGroup` shuts down gracefully or its task is
    /// cancelled, all its work in one task group: the events forwarded to the sinks, the
    /// fleet reports' delivery, start-up, then `started`, then the apply driver and the
    /// periodic checks; at shutdown `STOPPING=1`, the checks and the driver end, the
    /// updater shuts down (a trial in progress recorded, the root's lock released), the
    /// sinks get the last events, and pending reports get their 2 s. No task outlives
    /// `run()`. The other services of the group shut down first when listed after it (a
    /// group stops its services in reverse order), so a server stops answering before the
    /// updater goes. An agent runs once.
    /// - Throws: what start-up throws, or what `started` throws (the updater shut down first);
    ///   ``EngineError`` `.invalidArgument` when it has run before.
    public func run() async throws {
        let again = ran.withLock { ran in
            defer { ran = true }
            return ran
        }
        guard !again else { throw EngineError(.invalidArgument, "this DeviceAgent has run before: an agent runs once") }
        do {
            try await runOnce()
        } catch {
            startup.resolve(.failure(error))
            throw error
        }
    }

    /// Start-up's report once ``run()`` has started the engine (the served version chosen,
    /// `started` called).
    /// - Throws: what ended ``run()`` before (start-up's error; `CancellationError` when it
    ///   was cancelled), or `CancellationError` when the waiting task is cancelled.
    public func startedUp() async throws -> LifecycleReport { try await startup.value() }

    /// Fails what waits for start-up: the agent will not run (its host failed before it).
    package func willNotStart(_ error: any Error) { startup.resolve(.failure(error)) }

    /// The body of ``run()``.
    private func runOnce() async throws {
        let events = updater.events()
        let (updater, supervisor, sinks, reports, apply, checks, nextCheck) = (updater, supervisor, sinks, reports, apply, checks, nextCheck)
        let problems = pageProblems
        try await withThrowingTaskGroup(of: Work.self) { work in
            work.addTask {
                await Self.forward(events, supervisor: supervisor, sinks: sinks, reports: reports, apply: apply, problems: problems)
                return .forward
            }
            if let reports {
                work.addTask(priority: .background) {
                    await reports.run()
                    return .delivery
                }
            }
            // Ends the work that outlives the updater: the forwarding once the updater's
            // streams have ended (every event reached the sinks), then the delivery.
            func finish() async throws {
                updater.endEvents()
                while let done = try await work.next(), done != .forward {}
                work.cancelAll()
                await reports?.flush(within: .seconds(2))
            }
            do {
                let report = try await updater.start(bridge: bridge, clock: clock)
                supervisor.started(report)
                problems.served(report.current.description)
                try await started(report)
                startup.resolve(.success(report))
            } catch {
                await updater.shutdown()
                try await finish()
                throw error
            }
            await withTaskGroup(of: Void.self) { running in
                running.addTask { await apply.run() }
                running.addTask { await problems.run() }
                running.addTask { await Self.checkLoop(updater, apply, checks, nextCheck) }
                // Until SIGTERM reaches the group (or the group's task is cancelled).
                try? await gracefulShutdown()
                supervisor.stopping()
                running.cancelAll()
            }
            await updater.shutdown()
            try await finish()
        }
    }

    /// The children of ``run()``'s task group.
    private enum Work: Sendable { case forward, delivery }

    /// Hands every event to the supervisor and the sinks, in order, and wakes the report
    /// sender and the apply driver; ends when the updater's stream ends (at shutdown).
    private static func forward(
        _ events: AsyncStream<UpdaterEvent>, supervisor: SupervisorStatus, sinks: [Sink], reports: ReportSender?, apply: ApplyDriver,
        problems: PageProblems
    ) async {
        for await event in events {
            supervisor.apply(event)
            for sink in sinks { sink(event) }
            reports?.wake()
            switch event {
            case .updateAvailable, .watchdog: apply.wake()
            case .switched(let version): problems.served(version)
            default: break
            }
        }
    }

    /// The periodic checks until the task is cancelled: the first once `checks.first`
    /// returns (the shell: when the client is on screen), else after one interval. Each
    /// wait is the interval spread by ±10 %, seeded by the device (so a fleet started
    /// together does not check together), and after a feed's refusal with `Retry-After` at
    /// least what it asked, up to a day (`CheckSchedule`). A check whose download was
    /// deferred is followed by one when the deferral ends (plus the device's share of a
    /// tenth of the interval), whether the loop ran it or someone asked for it
    /// (``checkForUpdates()``).
    private static func checkLoop(_ updater: Updater, _ apply: ApplyDriver, _ checks: Checks, _ next: NextCheck) async {
        guard checks.interval > .zero else { return }
        // The device's id (made now if the root has none yet: a packaged app's roots share
        // their path on every device, so the path alone would not spread a fleet).
        let device = (try? DeviceIdFile.readOrCreate(updater.layout))?.text ?? updater.layout.root
        let schedule = CheckSchedule(every: checks.interval, device: device)
        if let first = checks.first {
            await first()
        } else {
            guard await next.wait(schedule.delay(before: 0), check: 0, schedule: schedule) else { return }
        }
        var check = 1
        while !Task.isCancelled {
            var retryAfter: Duration?
            var deferredUntil: Date?
            do {
                deferredUntil = try await Self.check(updater, apply).deferredUntil
            } catch {
                retryAfter = HTTPStatusFailure.found(in: error)?.retryAfter
                checks.failed(error)
            }
            // A deferred download: check again at the first moment it may (docs/download-policy.md).
            let wait =
                deferredUntil.map { schedule.delay(before: check, retryAfter: retryAfter, deferredUntil: $0, now: checks.now()) }
                ?? schedule.delay(before: check, retryAfter: retryAfter)
            guard await next.wait(wait, check: check, schedule: schedule) else { return }
            check += 1
        }
    }

    /// Checks for updates now, for whoever asks (a page's `checkForUpdates()`, the shell's
    /// bridge): the apply driver knows the check is downloading and switches nothing until
    /// it ended. A check whose download is deferred (a download window, a hold, a metered
    /// link: `InstallReport.deferredUntil`) moves the next periodic check to the moment
    /// the deferral ends, plus the device's share of a tenth of the interval, as the
    /// agent's own checks do; never later than it was due (docs/download-policy.md).
    /// - Throws: what `Updater.checkForUpdates()` throws.
    @discardableResult
    public func checkForUpdates() async throws -> InstallReport {
        let report = try await Self.check(updater, apply)
        if let until = report.deferredUntil { nextCheck.deferred(until: until, now: checks.now()) }
        return report
    }

    private static func check(_ updater: Updater, _ apply: ApplyDriver) async throws -> InstallReport {
        try await apply.whileDownloading { try await updater.checkForUpdates() }
    }

    /// The apply driver of `engine`'s root: its maintenance windows read in their zone,
    /// or the device's own (UTC when the system's zone cannot read windows: status says so).
    private static func applyDriver(_ engine: DeviceEngine, clock: MonotonicClock) -> ApplyDriver {
        let zone = (try? DeviceSettings.systemZone()) ?? TimeZone(identifier: "UTC") ?? TimeZone(secondsFromGMT: 0) ?? .current
        return ApplyDriver(
            updater: engine.updater, windows: engine.config.deviceSettings.maintenanceWindows(systemZone: zone), now: engine.now,
            clock: clock)
    }
}

/// When the agent's next periodic check runs: a deadline on the agent's monotonic clock
/// that the check loop waits for, and that a requested check which ended deferred moves
/// earlier (to the deferral's end), waking the loop to wait for the new one.
private final class NextCheck: Sendable {
    private struct State {
        /// The loop's schedule, once it has one; the number of the check it last ran.
        var schedule: CheckSchedule?
        var check = 0
        /// When the loop's next check is due; nil while it checks (or before its first wait).
        var deadline: Duration?
    }
    private let clock: MonotonicClock
    private let state = Mutex(State())
    private let signal: WakeSignal

    init(clock: MonotonicClock) {
        self.clock = clock
        signal = WakeSignal(clock: clock)
    }

    /// Waits `delay` after check number `check`, or until the earlier moment a deferred
    /// requested check sets meanwhile; false when the task was cancelled.
    func wait(_ delay: Duration, check: Int, schedule: CheckSchedule) async -> Bool {
        let start = clock.now
        state.withLock {
            $0.schedule = schedule
            $0.check = check
            $0.deadline = start + delay
        }
        while !Task.isCancelled {
            let deadline = state.withLock { $0.deadline } ?? clock.now
            if clock.now >= deadline {
                state.withLock { $0.deadline = nil }
                return true
            }
            await signal.wait(until: deadline)
        }
        return false
    }

    /// A requested check ended deferred until `until` (the device's time, read at `now`):
    /// the next check is due then, plus the device's share of a tenth of the interval
    /// (`CheckSchedule.delay(before:retryAfter:deferredUntil:now:)`), unless it was due sooner.
    func deferred(until: Date, now: Date) {
        let moved = state.withLock { s -> Bool in
            guard let schedule = s.schedule, let deadline = s.deadline else { return false }
            let at = clock.now + schedule.delay(before: s.check, deferredUntil: until, now: now)
            guard at < deadline else { return false }
            s.deadline = at
            return true
        }
        if moved { signal.wake() }
    }
}

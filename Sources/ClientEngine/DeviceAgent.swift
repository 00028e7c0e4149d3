import ApplyPolicy
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
    /// The periodic checks: their interval, when the first may run, what a failure does.
    private struct Checks: Sendable {
        let interval: Duration
        let first: (@Sendable () async -> Void)?
        let failed: @Sendable (any Error) -> Void
        /// The device's time, against which a deferred download's moment is read.
        let now: @Sendable () -> Date
    }
    private let started: @Sendable (LifecycleReport) async throws -> Void
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
    public init(
        _ engine: DeviceEngine, supervisor: SupervisorStatus = SupervisorStatus(), sinks: [Sink] = [], bridge: any HostBridge,
        checkEvery interval: Duration, firstCheck: (@Sendable () async -> Void)? = nil,
        started: @escaping @Sendable (LifecycleReport) async throws -> Void = { _ in },
        checkFailed: @escaping @Sendable (any Error) -> Void = { _ in }
    ) {
        self.updater = engine.updater
        self.supervisor = supervisor
        self.reports = engine.reportSender()
        self.sinks = sinks
        self.apply = Self.applyDriver(engine)
        self.downloadHolds = engine.downloadHolds
        self.pageProblems = PageProblems(updater: engine.updater, allowRollback: engine.config.deviceSettings.errorRollback)
        self.bridge = bridge
        self.checks = Checks(interval: interval, first: firstCheck, failed: checkFailed, now: engine.now)
        self.started = started
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
        let (updater, supervisor, sinks, reports, apply, checks) = (updater, supervisor, sinks, reports, apply, checks)
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
                let report = try await updater.start(bridge: bridge)
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
                running.addTask { await Self.checkLoop(updater, apply, checks) }
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
    /// least what it asked, up to a day (`CheckSchedule`).
    private static func checkLoop(_ updater: Updater, _ apply: ApplyDriver, _ checks: Checks) async {
        guard checks.interval > .zero else { return }
        // The device's id (made now if the root has none yet: a packaged app's roots share
        // their path on every device, so the path alone would not spread a fleet).
        let device = (try? DeviceIdFile.readOrCreate(updater.layout))?.text ?? updater.layout.root
        let schedule = CheckSchedule(every: checks.interval, device: device)
        if let first = checks.first {
            await first()
        } else {
            do { try await Task.sleep(for: schedule.delay(before: 0)) } catch { return }
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
            do { try await Task.sleep(for: wait) } catch { return }
            check += 1
        }
    }

    /// Checks for updates now, for whoever asks (the periodic schedule, a page's
    /// `checkForUpdates()`, the shell's bridge): the apply driver knows the check is
    /// downloading and switches nothing until it ended.
    /// - Throws: what `Updater.checkForUpdates()` throws.
    @discardableResult
    public func checkForUpdates() async throws -> InstallReport { try await Self.check(updater, apply) }

    private static func check(_ updater: Updater, _ apply: ApplyDriver) async throws -> InstallReport {
        try await apply.whileDownloading { try await updater.checkForUpdates() }
    }

    /// The apply driver of `engine`'s root: its maintenance windows read in their zone,
    /// or the device's own (UTC when the system's zone cannot read windows: status says so).
    private static func applyDriver(_ engine: DeviceEngine) -> ApplyDriver {
        let zone = (try? DeviceSettings.systemZone()) ?? TimeZone(identifier: "UTC") ?? TimeZone(secondsFromGMT: 0) ?? .current
        return ApplyDriver(
            updater: engine.updater, windows: engine.config.deviceSettings.maintenanceWindows(systemZone: zone), now: engine.now)
    }
}

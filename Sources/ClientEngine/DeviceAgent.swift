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
/// It is a swift-service-lifecycle `Service`: given its bridge and schedule at init, its
/// ``run()`` starts the engine, checks periodically until the `ServiceGroup` shuts down
/// gracefully (SIGTERM), then says `STOPPING=1` and shuts the updater down. A host with a
/// server puts both in one group (`clientctl serve`):
///
/// ```swift
/// let agent = DeviceAgent(engine, sinks: [{ event in print(event) }], bridge: myBridge, checkEvery: 3600)
/// let group = ServiceGroup(
///     configuration: .init(services: [.init(service: agent), .init(service: myServer)],
///                          gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
/// try await group.run()
/// ```
///
/// A host whose own loop owns the main thread (the GTK shell, Examples/MinimalHost) runs the
/// group in a task and calls `triggerGracefulShutdown()` when its loop ends. A host that
/// cannot use a group drives the same steps by hand: ``start(bridge:)``,
/// ``checkPeriodically(every:first:onFailure:)``, ``stopping()`` and ``shutdown()``. Either
/// way the host adds its sinks (stderr lines, the page), says when it is ready
/// (`SupervisorStatus.ready(_:)` on ``supervisor``) and beats its own watchdog
/// (`SupervisorStatus.watchdog()`). The calls of the updater it does not make
/// (acknowledging a start-up, switching to a pending version, rolling back) stay the
/// host's, on ``updater``.
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
    private let sinks: [Sink]
    /// Sends the root's fleet reports in the background (nil without a report URL).
    private let reports: ReportSender?
    /// What ``run()`` starts and how often it checks.
    private let service: ServiceSettings?
    private struct ServiceSettings: Sendable {
        let bridge: any HostBridge
        let checkSeconds: Double
        let firstCheck: (@Sendable () async -> Void)?
        let started: @Sendable (LifecycleReport) async throws -> Void
        let checkFailed: @Sendable (any Error) -> Void
    }
    private struct Tasks {
        var forward: Task<Void, Never>?
        var checks: Task<Void, Never>?
        var reports: Task<Void, Never>?
        var apply: Task<Void, Never>?
        var stopped = false
    }
    private let tasks = Mutex(Tasks())

    /// An agent for the engine's updater; nothing runs until ``start(bridge:)``.
    /// - Parameters:
    ///   - engine: an engine opened by ``DeviceEngine/open(root:options:)``.
    ///   - supervisor: by default the one `NOTIFY_SOCKET` names (nothing outside systemd).
    ///   - sinks: called in this order for each event.
    ///
    /// When the root names a report URL (docs/fleet-reports.md#delivery), the agent also
    /// delivers its fleet reports: a low-priority task sends them within seconds of each
    /// event, on the root's transport; it never delays a check or a trial.
    public init(_ engine: DeviceEngine, supervisor: SupervisorStatus = SupervisorStatus(), sinks: [Sink]) {
        self.updater = engine.updater
        self.supervisor = supervisor
        self.reports = engine.reportSender()
        self.sinks = sinks
        self.service = nil
        self.apply = Self.applyDriver(engine)
    }

    /// An agent that runs as a `Service` (``run()``).
    /// - Parameters:
    ///   - engine: an engine opened by ``DeviceEngine/open(root:options:)``.
    ///   - supervisor: by default the one `NOTIFY_SOCKET` names (nothing outside systemd).
    ///   - sinks: called in this order for each event.
    ///   - bridge: the host's web view: the folder to serve, reloading it.
    ///   - seconds: the interval of periodic checks (0: only when the page asks).
    ///   - firstCheck: returns when the first periodic check may run (the shell: once the
    ///     client is on screen); nil: one interval after start-up.
    ///   - started: called once start-up has ended (its report), before the first check;
    ///     throwing from it ends the service with that error.
    ///   - checkFailed: a failed periodic check (its `error` event has reached the sinks).
    public init(
        _ engine: DeviceEngine, supervisor: SupervisorStatus = SupervisorStatus(), sinks: [Sink], bridge: any HostBridge,
        checkEvery seconds: Double, firstCheck: (@Sendable () async -> Void)? = nil,
        started: @escaping @Sendable (LifecycleReport) async throws -> Void = { _ in },
        checkFailed: @escaping @Sendable (any Error) -> Void = { _ in }
    ) {
        self.updater = engine.updater
        self.supervisor = supervisor
        self.reports = engine.reportSender()
        self.sinks = sinks
        self.apply = Self.applyDriver(engine)
        self.service = ServiceSettings(
            bridge: bridge, checkSeconds: seconds, firstCheck: firstCheck, started: started, checkFailed: checkFailed)
    }

    /// Runs the agent until its `ServiceGroup` shuts down gracefully or its task is
    /// cancelled, all its work in one task group: the events forwarded to the sinks, the
    /// fleet reports' delivery, start-up, then `started`, then the apply driver and the
    /// periodic checks; at shutdown ``stopping()`` (`STOPPING=1`), the checks and the driver
    /// end, the updater shuts down (a trial in progress recorded, the root's lock released),
    /// the sinks get the last events, and pending reports get their 2 s. No task outlives
    /// `run()`. The other services of the group shut down first when listed after it (a
    /// group stops its services in reverse order), so a server stops answering before the
    /// updater goes.
    /// - Throws: what start-up throws, or what `started` throws (the updater shut down first);
    ///   ``EngineError`` `.invalidArgument` for an agent made without a bridge.
    public func run() async throws {
        guard let service else {
            throw EngineError(
                .invalidArgument, "this DeviceAgent was made without a bridge: use DeviceAgent.init(_:supervisor:sinks:bridge:checkEvery:)")
        }
        let events = updater.events()
        let (updater, supervisor, sinks, reports, apply) = (updater, supervisor, sinks, reports, apply)
        try await withThrowingTaskGroup(of: Work.self) { work in
            work.addTask {
                await Self.forward(events, supervisor: supervisor, sinks: sinks, reports: reports, apply: apply)
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
                await reports?.flush(within: 2)
            }
            let report: LifecycleReport
            do {
                report = try await updater.start(bridge: service.bridge)
                supervisor.started(report)
                try await service.started(report)
            } catch {
                await updater.shutdown()
                try await finish()
                throw error
            }
            await withTaskGroup(of: Void.self) { running in
                running.addTask { await apply.run() }
                running.addTask {
                    await Self.checkLoop(updater, apply, every: service.checkSeconds, first: service.firstCheck, onFailure: service.checkFailed)
                }
                // Until SIGTERM reaches the group (or the group's task is cancelled).
                try? await gracefulShutdown()
                stopping()
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
        _ events: AsyncStream<UpdaterEvent>, supervisor: SupervisorStatus, sinks: [Sink], reports: ReportSender?, apply: ApplyDriver
    ) async {
        for await event in events {
            supervisor.apply(event)
            for sink in sinks { sink(event) }
            reports?.wake()
            switch event {
            case .updateAvailable, .watchdog: apply.wake()
            default: break
            }
        }
    }

    /// Subscribes the sinks (so start-up's own events reach them), then starts the updater
    /// (`Updater.start(bridge:clock:shim:lockWait:)`); the supervisor learns the state
    /// start-up ended in. When start-up fails the sinks are unsubscribed.
    /// - Parameter bridge: the host's web view: the folder to serve, reloading it.
    /// - Returns: what start-up did (`Updater.start(bridge:clock:shim:lockWait:)`'s report).
    /// - Throws: what start-up throws (`CancellationError` when the host's task is cancelled).
    @discardableResult
    public func start(bridge: any HostBridge) async throws -> LifecycleReport {
        let events = updater.events()
        let forward = Task { [supervisor, sinks, reports, apply] in
            await Self.forward(events, supervisor: supervisor, sinks: sinks, reports: reports, apply: apply)
        }
        let delivery = reports.map { sender in Task(priority: .background) { await sender.run() } }
        tasks.withLock {
            $0.forward = forward
            $0.reports = delivery
        }
        do {
            let report = try await updater.start(bridge: bridge)
            supervisor.started(report)
            let driver = Task { [apply] in await apply.run() }
            let stopped = tasks.withLock { tasks in
                tasks.apply = driver
                return tasks.stopped
            }
            if stopped { driver.cancel() }
            return report
        } catch {
            forward.cancel()
            delivery?.cancel()
            throw error
        }
    }

    /// Checks for updates every `seconds` (0: never) until ``stopping()``: the first once
    /// `first` returns (the shell: when the client is on screen), else after one interval.
    /// Each wait is the interval spread by ±10 %, seeded by the device (so a fleet started
    /// together does not check together), and after a feed's refusal with `Retry-After` at
    /// least what it asked, up to a day (`CheckSchedule`). Again replaces the running
    /// schedule; after ``stopping()`` it does nothing.
    /// - Parameters:
    ///   - seconds: the interval (a packaged app's template names one: `DeviceTemplate.checkIntervalSeconds`).
    ///   - first: returns when the first check may run.
    ///   - onFailure: a failed check (its `error` event has reached the sinks).
    public func checkPeriodically(
        every seconds: Double, first: (@Sendable () async -> Void)? = nil, onFailure: @escaping @Sendable (any Error) -> Void = { _ in }
    ) {
        guard seconds > 0 else { return }
        let (updater, apply) = (self.updater, self.apply)
        let checks = Task { await Self.checkLoop(updater, apply, every: seconds, first: first, onFailure: onFailure) }
        let stopped = tasks.withLock { tasks in
            tasks.checks?.cancel()
            tasks.checks = checks
            return tasks.stopped
        }
        if stopped { checks.cancel() }
    }

    /// The periodic checks until the task is cancelled (``checkPeriodically(every:first:onFailure:)``).
    private static func checkLoop(
        _ updater: Updater, _ apply: ApplyDriver, every seconds: Double, first: (@Sendable () async -> Void)?,
        onFailure: @escaping @Sendable (any Error) -> Void
    ) async {
        guard seconds > 0 else { return }
        // The device's id (made now if the root has none yet: a packaged app's roots share
        // their path on every device, so the path alone would not spread a fleet).
        let device = (try? DeviceIdFile.readOrCreate(updater.layout)) ?? updater.layout.root
        let schedule = CheckSchedule(every: seconds, device: device)
        if let first {
            await first()
        } else {
            do { try await Task.sleep(for: schedule.delay(before: 0)) } catch { return }
        }
        var check = 1
        while !Task.isCancelled {
            var retryAfter: Duration?
            do {
                _ = try await Self.check(updater, apply)
            } catch {
                retryAfter = HTTPStatusFailure.found(in: error)?.retryAfter
                onFailure(error)
            }
            do { try await Task.sleep(for: schedule.delay(before: check, retryAfter: retryAfter)) } catch { return }
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

    /// The host is stopping: `STOPPING=1` to systemd (once) and no more periodic checks.
    public func stopping() {
        let first = tasks.withLock { tasks in
            defer { tasks.stopped = true }
            tasks.checks?.cancel()
            tasks.apply?.cancel()
            return !tasks.stopped
        }
        if first { supervisor.stopping() }
    }

    /// Ends periodic checks, shuts the updater down (`Updater.shutdown()`: a trial in
    /// progress is recorded, the agent's lock released) and waits until the sinks have had
    /// every event, then gives pending fleet reports at most 2 s to reach the collector.
    /// `STOPPING=1` is the host's to send first (``stopping()``).
    public func shutdown() async {
        let (checks, forward, delivery, driver) = tasks.withLock { tasks in (tasks.checks, tasks.forward, tasks.reports, tasks.apply) }
        checks?.cancel()
        driver?.cancel()
        await driver?.value
        await updater.shutdown()
        await forward?.value  // the updater's streams end at shutdown
        delivery?.cancel()
        await delivery?.value
        // What the last moments recorded (a trial cut short), within a short bound.
        await reports?.flush(within: 2)
    }

    /// The apply driver of `engine`'s root: its maintenance windows read in their zone,
    /// or the device's own (UTC when the system's zone cannot read windows: status says so).
    private static func applyDriver(_ engine: DeviceEngine) -> ApplyDriver {
        let zone = (try? DeviceSettings.systemZone()) ?? TimeZone(identifier: "UTC") ?? TimeZone(secondsFromGMT: 0) ?? .current
        return ApplyDriver(
            updater: engine.updater, windows: engine.config.deviceSettings.maintenanceWindows(systemZone: zone), now: engine.now)
    }
}

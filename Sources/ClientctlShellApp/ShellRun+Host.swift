internal import CWebKitGTK
import ClientEngine
import ClientUpdater
import Foundation

/// The engine's side of a shell run: its ``DeviceHost`` (the agent and, under
/// `--origin loopback`, the listener), the agent's events and start-up, the host's end.
extension ShellRun {
    /// The host of the run: the agent with the run's sink, and the loopback listener, which
    /// binds its port before the engine starts.
    /// - Parameter interval: the interval of periodic checks; the first runs once the current
    ///   version is on screen (its first paint, or at most `firstCheckWait` later if it never
    ///   paints). Failures arrive as `error` events (the sink forwards them to stdout and the page).
    func makeHost(
        _ engine: DeviceEngine, bridge: ShellBridge, view: ShellView, checkEvery interval: Duration, loopback: LoopbackOrigin?
    ) -> DeviceHost {
        let agent = DeviceAgent(
            engine, supervisor: systemd, sinks: [{ [self] event in self.forward(event, to: view) }], bridge: bridge,
            checkEvery: interval, firstCheck: { [onScreen] in await onScreen.wait(atMost: Self.firstCheckWait) },
            started: { [self] report in self.started(report) })
        // A group stops its services in reverse order: the listener first, then the agent.
        // GTK's loop handles the signals, so the group traps none.
        let services = loopback.map { loopback in [DeviceHost.HostService.beforeStartup(loopback) { _ = try await loopback.listening() }] }
        return DeviceHost(agent, services: services ?? [])
    }

    /// Runs the host (a task on Swift's pool) until it has shut down; a start-up that fails
    /// ends the shell with its exit status.
    func runHost(_ host: DeviceHost, bridge: ShellBridge) async {
        do {
            try await host.run()
        } catch is CancellationError {
            // The window closed (or --exit-after ran out) while the engine was starting,
            // e.g. waiting for a one-shot command's agent lock: a normal exit.
        } catch {
            let code = Self.fail(error)
            log.emit("error", ["message": "\(error)"])
            state.withLock { $0.status = code }
            GMain.async { gtk_main_quit() }
        }
        bridge.ready.open()  // requests still waiting get 503: the shell is closing
    }

    /// The window has closed: `STOPPING=1` at once, then the host shuts down (a start-up
    /// still waiting, for the root's lock say, is cancelled). GTK's main context keeps
    /// running until the engine has shut down: an operation in flight (a switch or a
    /// rollback reloading the view through `GMain.run`) needs this thread to finish, and
    /// the shutdown waits for that operation. Blocked here, the shell hung on SIGTERM when
    /// a switch was under way.
    func stop(_ host: DeviceHost, running: Task<Void, Never>) {
        systemd.stopping()
        let startedUp = state.withLock { $0.startedUp }
        let stopped = DispatchSemaphore(value: 0)
        Task {
            await host.shutDown()
            if !startedUp { running.cancel() }
            await running.value
            stopped.signal()
            g_main_context_wakeup(nil)
        }
        while stopped.wait(timeout: .now()) == .timedOut { g_main_context_iteration(nil, 1) }
    }

    /// An engine event to stdout and the page (the agent's sink; systemd has followed it).
    func forward(_ event: UpdaterEvent, to view: ShellView) {
        log.emit(event)
        pageStart?.engineEvent(event)
        switch event {
        case .updateAvailable(let version):
            GMain.async { view.deliver(event: "updateAvailable", json: "{\"version\":\(PageBridge.jsString(version))}") }
        case .error(let message):
            GMain.async { view.deliver(event: "error", json: "{\"message\":\(PageBridge.jsString(message))}") }
        case .watchdog(.failed), .watchdog(.revoked):
            // The good version reloads; if its page never acknowledges, snapshot anyway.
            GMain.after(.seconds(2)) { self.takeSnapshot(view) }
        default: break
        }
    }

    /// The agent's start-up has ended: the run's `started` event, the page-start watch told.
    func started(_ report: LifecycleReport) {
        state.withLock { $0.startedUp = true }
        log.emit("started", ["version": report.current.description, "ms": log.millisecondsSinceLaunch])
        pageStart?.started(report)
        if report.shellUpdateReset { Self.printError("new embedded seed: downloaded versions dropped") }
    }
}

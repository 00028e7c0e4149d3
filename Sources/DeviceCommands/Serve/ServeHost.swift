import ClientEngine
import ClientServer
import ClientUpdater
import CommandSupport
import ServingCore

/// What `clientctl serve` runs (docs/serving.md): the root's ``DeviceAgent`` and its
/// loopback ``ClientServer`` in the one ``DeviceHost``, the server listening once start-up
/// has chosen what it serves; what happens is told on stderr and to systemd.
enum ServeHost {
    /// The host of `context`'s root, serving on `configuration`.
    /// - Parameter interval: the interval of periodic checks (`.zero`: only when a page asks).
    /// - Throws: ``ServerError`` `.invalidConfiguration` for a configuration the server refuses.
    static func make(_ context: DeviceContext, configuration: ServerConfiguration, checkEvery interval: Duration) throws -> DeviceHost {
        let server = try ClientServer(configuration: configuration)
        // Start-up's watchdog events reach stderr too; systemd's STATUS follows them.
        let agent = DeviceAgent(
            context.engine, sinks: [logEvent], bridge: ServerBridge(server), checkEvery: interval,
            started: { report in
                if report.shellUpdateReset { printError("clientctl serve: new embedded seed: downloaded versions dropped") }
            },
            checkFailed: { printError("clientctl serve: update check failed: \($0)") })
        // The control endpoints, with the apply driver behind them (docs/apply-policies.md#serve);
        // nothing listens before start-up has ended.
        server.setControlHandler(AgentControl(agent))
        // WATCHDOG=1 from the event loops that serve (docs/serving.md#systemd).
        let (systemd, updater) = (agent.supervisor, context.updater)
        let heartbeat = systemd.watchdogInterval.map { LoopHeartbeat(interval: $0) { systemd.watchdog() } }
        let listening = server.service(heartbeat: heartbeat, clock: context.engine.monotonic) { port in
            await updater.recordControlAddress("http://127.0.0.1:\(port)/__clientctl/")
            printError("serving http://127.0.0.1:\(port)/")
            systemd.ready { version, state in "serving \(version) (\(state)) on http://127.0.0.1:\(port)/" }
        }
        // SIGTERM or SIGINT shut the group down gracefully, in reverse order: the server
        // stops answering (open event streams end), then the agent says STOPPING=1 and
        // shuts the updater down. A server that cannot listen shuts the agent down too.
        return DeviceHost(agent, services: [.afterStartup(listening)], stopsOnSignals: true)
    }

    /// What happens while serving, one line each on stderr.
    @Sendable static func logEvent(_ event: UpdaterEvent) {
        switch event {
        case .watchdog(.trialStarted), .watchdog(.committed), .watchdog(.failed), .watchdog(.revoked):
            if case .watchdog(let e) = event { printError("clientctl serve: " + e.message) }
        case .updateAvailable(let version):
            printError("clientctl serve: \(version) is ready; it is served after switch-to-pending or the next start")
        case .error(let message): printError("clientctl serve: error: " + message)
        case .switched(let version): printError("clientctl serve: now serving \(version)")
        case .downloadProgress, .installNote, .watchdog: break
        }
    }
}

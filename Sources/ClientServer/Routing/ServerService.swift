import ClientFoundation
import ServiceLifecycle

extension ClientServer {
    /// `serve`'s server as one service of the device host's `ServiceGroup`, started once the
    /// agent's start-up has ended (`DeviceHost.HostService.afterStartup`): it listens until
    /// the group shuts down gracefully, with `heartbeat` beating on its event loop
    /// (systemd's watchdog), event streams' heartbeats on `clock` (the engine's,
    /// `DeviceEngine.Options.clock`) and `onRunning` told the bound port.
    package func service(
        heartbeat: LoopHeartbeat?, clock: MonotonicClock = .continuous, onRunning: @escaping @Sendable (Int) async -> Void
    ) -> some Service {
        ServerService(server: self, heartbeat: heartbeat, clock: clock, onRunning: onRunning)
    }
}

/// ``ClientServer/service(heartbeat:clock:onRunning:)``.
struct ServerService: Service {
    let server: ClientServer
    let heartbeat: LoopHeartbeat?
    let clock: MonotonicClock
    let onRunning: @Sendable (Int) async -> Void

    func run() async throws {
        do {
            try await server.makeApplication(onRunning: onRunning, heartbeat: heartbeat, clock: clock).run()
        } catch {
            throw ServerError(.cannotListen, "cannot serve on \(server.configuration.host):\(server.configuration.port): \(error)")
        }
    }
}

import ServiceLifecycle

extension ClientServer {
    /// `serve`'s server as one service of a `ServiceGroup` beside the device agent: it waits
    /// for `ready` (the agent's start-up: the served version chosen, the control handler
    /// set), then listens until the group shuts down gracefully, with `heartbeat` beating on
    /// its event loop (systemd's watchdog) and `onRunning` told the bound port.
    package func service(
        heartbeat: LoopHeartbeat?, after ready: @escaping @Sendable () async throws -> Void,
        onRunning: @escaping @Sendable (Int) async -> Void
    ) -> some Service {
        ServerService(server: self, heartbeat: heartbeat, ready: ready, onRunning: onRunning)
    }
}

/// ``ClientServer/service(heartbeat:after:onRunning:)``.
struct ServerService: Service {
    let server: ClientServer
    let heartbeat: LoopHeartbeat?
    let ready: @Sendable () async throws -> Void
    let onRunning: @Sendable (Int) async -> Void

    func run() async throws {
        try await ready()
        try Task.checkCancellation()
        do {
            try await server.makeApplication(onRunning: onRunning, heartbeat: heartbeat).run()
        } catch {
            throw ServerError(.cannotListen, "cannot serve on \(server.configuration.host):\(server.configuration.port): \(error)")
        }
    }
}

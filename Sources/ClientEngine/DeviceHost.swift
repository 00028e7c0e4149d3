import ClientUpdater
import Logging
import ServiceLifecycle

/// The one host loop of a device as the `ServiceGroup` `clientctl serve`, the native shell
/// and an embedding host run (Examples/MinimalHost): the ``DeviceAgent`` first, then the
/// host's own services (its server, its listener), each started at its moment of the
/// agent's start-up.
///
/// A group stops its services in reverse order, so at shutdown the host's services stop
/// first (a server stops answering, open event streams end), then the agent says
/// `STOPPING=1` and shuts the updater down. A host service that ends, or fails, shuts the
/// whole group down gracefully; a start-up that fails ends the group with its error.
///
/// ```swift
/// let host = DeviceHost(agent, services: [.afterStartup(server)], stopsOnSignals: true)
/// try await host.run()        // until SIGTERM or SIGINT
/// ```
///
/// A host whose own loop owns the main thread (the GTK shell) runs ``run()`` in a task and
/// calls ``shutDown()`` when its loop ends; ``startedUp()`` is the one place a host waits
/// for start-up's end.
public final class DeviceHost: Sendable {
    /// The agent the group runs first.
    public let agent: DeviceAgent
    private let group: ServiceGroup

    /// A service of the host beside its agent, and when it starts.
    public struct HostService: Sendable {
        let service: any Service
        /// Returns once the service is ready for start-up to begin; nil: it starts after start-up.
        let ready: (@Sendable () async throws -> Void)?

        /// A service that starts once the agent's start-up has ended: `clientctl serve`'s
        /// server, which listens only once the version it serves is chosen. It does not
        /// start when start-up fails.
        public static func afterStartup(_ service: any Service) -> HostService { HostService(service: service, ready: nil) }

        /// A service that starts at once; the agent's start-up begins when `ready` returns
        /// (the shell's loopback listener: its port bound before the engine starts). When
        /// `ready` throws, the agent does not start and the group ends with that error.
        public static func beforeStartup(_ service: any Service, ready: @escaping @Sendable () async throws -> Void) -> HostService {
            HostService(service: service, ready: ready)
        }
    }

    /// - Parameters:
    ///   - agent: the device agent (it runs first and stops last).
    ///   - services: the host's services, in the order they start (they stop in reverse).
    ///   - stopsOnSignals: SIGTERM and SIGINT shut the group down gracefully; false: the host
    ///     handles them itself and calls ``shutDown()`` (the GTK shell, whose main loop does).
    ///   - logger: the group's own log (by default none).
    public init(
        _ agent: DeviceAgent, services: [HostService] = [], stopsOnSignals: Bool = false,
        logger: Logger = Logger(label: "clientctl.host", factory: { _ in SwiftLogNoOpLogHandler() })
    ) {
        self.agent = agent
        let first = AgentService(agent: agent, after: services.compactMap(\.ready))
        let rest = services.map { host -> ServiceGroupConfiguration.ServiceConfiguration in
            let service = host.ready == nil ? AfterStartup(agent: agent, service: host.service) : host.service
            return .init(service: service, successTerminationBehavior: .gracefullyShutdownGroup, failureTerminationBehavior: .gracefullyShutdownGroup)
        }
        group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [.init(service: first)] + rest, gracefulShutdownSignals: stopsOnSignals ? [.sigterm, .sigint] : [],
                logger: logger))
    }

    /// Runs the group until it has shut down (a signal, ``shutDown()``, a service that
    /// ended) or its task is cancelled.
    /// - Throws: what start-up threw, or what a service threw.
    public func run() async throws { try await group.run() }

    /// Start-up's report once the agent has started the engine (``DeviceAgent/startedUp()``).
    /// - Throws: what ended the host before.
    public func startedUp() async throws -> LifecycleReport { try await agent.startedUp() }

    /// The host is stopping: `STOPPING=1` at once, then the group shuts down gracefully (its
    /// services in reverse order, the agent last). A start-up under way runs to its end
    /// first; cancel ``run()``'s task to cut it short.
    public func shutDown() async {
        agent.supervisor.stopping()
        await group.triggerGracefulShutdown()
    }
}

/// The agent as the group's first service: it starts once the services that start before
/// start-up are ready.
private struct AgentService: Service {
    let agent: DeviceAgent
    let after: [@Sendable () async throws -> Void]

    func run() async throws {
        do {
            for ready in after { try await ready() }
        } catch {
            agent.willNotStart(error)
            throw error
        }
        try await agent.run()
    }
}

/// A host service that starts once the agent's start-up has ended, and not at all when it
/// failed (the agent ends the group with start-up's error).
private struct AfterStartup: Service {
    let agent: DeviceAgent
    let service: any Service

    func run() async throws {
        guard (try? await agent.startedUp()) != nil else { return }
        try Task.checkCancellation()
        try await service.run()
    }
}

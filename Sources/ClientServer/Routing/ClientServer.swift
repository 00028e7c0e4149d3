import ClientFoundation
import ClientShim
import ClientUpdater
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import LoopbackHTTP
import NIOCore
import ServiceLifecycle
import ServingCore
import struct ServingCore.ServerConfiguration

/// The loopback HTTP server behind `clientctl serve` (docs/serving.md).
///
/// It serves the current `serving/<id>/` folder; ``activate(servingDirectory:)`` loads
/// another version's index first and then flips one pointer, so a request is always
/// answered from a single version. `/__clientctl/` requests go to the attached
/// `ControlHandler`.
///
/// ```swift
/// let server = try ClientServer(configuration: .init(port: ServerConfiguration.derivedPort(forApp: app)))
/// try server.activate(servingDirectory: layout.servingDirectory(id)!)
/// server.setControlHandler(updater)
/// try await server.runService()          // until SIGTERM/SIGINT
/// ```
public final class ClientServer: Sendable {
    public let configuration: ServerConfiguration
    let logger: Logger
    /// The serving rules, shared with every other front end (the native shell's scheme).
    let core: ServingCore
    var pointer: CurrentVersion { core.pointer }
    /// What answers the `/__clientctl/` endpoints.
    let control: ControlSlot
    /// Open event streams (the cap of ``ServerConfiguration/maxEventStreams``).
    package let eventStreams: StreamGate
    /// Answers only requests naming this listener (DNS rebinding), see ``HostGuard``.
    let hostGuard: HostGuard

    /// - Throws: ``ServerError`` `.invalidConfiguration` for a bad port, host or `www`
    ///   folder.
    public init(
        configuration: ServerConfiguration, control: (any ControlHandler)? = nil,
        logger: Logger = Logger(label: "clientctl.serve")
    ) throws {
        guard (0...65535).contains(configuration.port) else {
            throw ServerError(.invalidConfiguration, "port \(configuration.port) is not between 0 and 65535")
        }
        guard !configuration.host.isEmpty else { throw ServerError(.invalidConfiguration, "no address to listen on") }
        for (name, timeout) in [("header timeout", configuration.headerTimeout), ("idle timeout", configuration.idleTimeout)]
        where !ServerConfiguration.timeoutRange.contains(timeout) {
            throw ServerError(.invalidConfiguration, "the \(name) must be between 0.1 and 3600 seconds, got \(timeout.inSeconds)")
        }
        guard configuration.maxConnections > 0, configuration.maxEventStreams > 0 else {
            throw ServerError(.invalidConfiguration, "connection and event-stream limits must be positive")
        }
        if let csp = configuration.contentSecurityPolicy, csp.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" }) {
            throw ServerError(.invalidConfiguration, "the Content-Security-Policy must be one line")
        }
        self.configuration = configuration
        self.logger = logger
        self.hostGuard = HostGuard(port: configuration.port)
        do {
            core = try ServingCore(
                wwwDirectory: configuration.wwwDirectory, contentSecurityPolicy: configuration.contentSecurityPolicy, logger: logger)
        } catch let error as ServingError {
            throw ServerError(error)
        }
        self.control = ControlSlot()
        self.control.handler = control
        eventStreams = StreamGate(limit: configuration.maxEventStreams)
    }

    /// Loads `serving/<id>/` and makes it the version every new request gets.
    /// - Returns: the version id now served.
    @discardableResult
    public func activate(servingDirectory: String) throws -> String {
        let version = try ServedVersion.load(directory: servingDirectory, configuration: configuration)
        activate(version)
        return version.id
    }

    /// Makes an already loaded version current (a pointer flip).
    package func activate(_ version: ServedVersion) {
        pointer.version = version
        logger.info("serving version \(version.id) from \(version.directory)")
    }

    /// Stops serving files (requests get 503) until the next activation.
    public func deactivate() { pointer.version = nil }

    /// The id of the version being served.
    public var currentVersionID: String? { pointer.version?.id }

    /// Attaches (or detaches) what answers the `/__clientctl/` endpoints.
    public func setControlHandler(_ handler: (any ControlHandler)?) { control.handler = handler }

    /// The application as `serve` runs it (its router, timeouts and connection cap), for
    /// tests that drive the router without a socket (HummingbirdTesting's `.router`).
    /// - Parameter clock: what an event stream's heartbeat sleeps on.
    package func application(clock: MonotonicClock = .continuous) -> some ApplicationProtocol {
        makeApplication(onRunning: { _ in }, clock: clock)
    }

    /// The application: its router, timeouts and connection cap; `heartbeat` beats on its
    /// event loop and event streams' comments wait on `clock` (the engine's under `serve`).
    func makeApplication(
        onRunning: @escaping @Sendable (Int) async -> Void, heartbeat: LoopHeartbeat? = nil, clock: MonotonicClock = .continuous
    ) -> some ApplicationProtocol {
        // Hummingbird's default group, named here so the heartbeat watches the loops that serve.
        let group = EventLoopGroupProvider.singleton.eventLoopGroup
        let router = ClientRouter.make(
            slot: control,
            files: FileRoute(core: core),
            control: ControlResponder(heartbeat: configuration.eventHeartbeat, clock: clock, logger: logger, streams: eventStreams),
            hostGuard: hostGuard)
        return LoopbackApplication.make(
            router: router, configuration: configuration, hostGuard: hostGuard,
            connections: MaximumAvailableConnections(configuration.maxConnections, logger: logger), group: group,
            onRunning: { channel in
                await onRunning(channel.localAddress?.port ?? 0)
                heartbeat?.start(on: channel, group: group)
            },
            logger: logger)
    }

    /// Runs until the task is cancelled or an enclosing `ServiceGroup` shuts down.
    /// - Parameter onRunning: called with the bound port once the server listens.
    public func run(onRunning: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        do {
            try await makeApplication(onRunning: onRunning).run()
        } catch {
            throw ServerError(.cannotListen, "cannot serve on \(configuration.host):\(configuration.port): \(error)")
        }
    }

    /// Runs until SIGTERM or SIGINT, then shuts down gracefully (open event streams end).
    public func runService(onRunning: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        do {
            try await makeApplication(onRunning: onRunning).runService()
        } catch {
            throw ServerError(.cannotListen, "cannot serve on \(configuration.host):\(configuration.port): \(error)")
        }
    }
}

/// A ``ClientServer`` runs as a swift-service-lifecycle `Service`, so a host can put it in
/// one `ServiceGroup` with its other services (periodic checks, watchdog) and get one
/// graceful shutdown on SIGTERM: open event streams end, then the server stops.
extension ClientServer: Service {
    public func run() async throws {
        try await run(onRunning: { _ in })
    }
}

import FleetReports
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import ServiceLifecycle
import SignedManifest

/// How a collector listens and what it allows (`clientctl collect`'s flags).
public struct CollectorConfiguration: Sendable {
    /// The address to listen on (`127.0.0.1`).
    public var host: String
    /// The port (0: any free port).
    public var port: Int
    /// The token the read endpoints need.
    public var readToken: ReadToken
    /// Days reports are kept (1–3650).
    public var retentionDays: Int
    /// Rate limits per source address and device id.
    public var rateLimits: RateLimits
    /// Batches decoded or stored at once (more: 503).
    public var maxInFlight: Int
    /// Connections open at once (more wait in the kernel's backlog).
    public var maxConnections: Int
    /// Connections open at once from one source address (more are closed as they open).
    public var connectionsPerAddress = 32
    /// Batch bodies read at once from one source address (more: 429).
    public var readsPerAddress = 8
    /// The slowest average pace of a batch's body after its first 5 s, in bytes a second
    /// (slower: the connection is closed with no answer; 0: no such limit).
    public var minBodyBytesPerSecond = 1024
    /// How long a connection may stay silent (between requests, or inside one).
    public var idleTimeout: Duration
    /// How long a batch's body has to arrive.
    public var bodyTimeout: Duration
    /// The default window of `GET /v1/fleet` (a device is *on* a version when seen within it).
    public var windowSeconds: Int
    /// Which devices' reports count (docs/fleet-reports.md#admission).
    public var admission: AdmissionMode = .open
    /// The token of the operator's writes (`POST /v1/devices/admit`, `reject`, `forget`);
    /// nil: this collector takes none.
    public var adminToken: ReadToken?
    /// A file of keys to admit (one per line, `#` comments), read at start and whenever it
    /// changes (checked every 30 s); nil: none.
    public var admitFile: String?
    /// The key that must have signed the admit file (`FILE.sig`); nil: an unsigned file.
    public var admitFileKey: Ed25519.PublicKey?

    /// The allowed retention.
    public static let retentionRange = 1...3650
    /// The allowed `window` of `GET /v1/fleet`.
    public static let windowRange = 60...(366 * 86_400)

    /// A configuration with the defaults of `clientctl collect`.
    public init(
        host: String = "127.0.0.1", port: Int, readToken: ReadToken, retentionDays: Int = 90, rateLimits: RateLimits = .standard,
        maxInFlight: Int = 32, maxConnections: Int = 1024, idleTimeout: Duration = .seconds(30), bodyTimeout: Duration = .seconds(30),
        windowSeconds: Int = 86_400
    ) {
        self.host = host
        self.port = port
        self.readToken = readToken
        self.retentionDays = retentionDays
        self.rateLimits = rateLimits
        self.maxInFlight = maxInFlight
        self.maxConnections = maxConnections
        self.idleTimeout = idleTimeout
        self.bodyTimeout = bodyTimeout
        self.windowSeconds = windowSeconds
    }
}

/// The fleet report collector (docs/fleet-reports.md#the-collector): devices POST batches,
/// release engineers read the fleet with the read token.
///
/// ```swift
/// let store = try SQLiteReportStore(path: "/var/lib/clientctl-collect/reports.db")
/// try await store.prepare()
/// let collector = Collector(configuration: .init(port: 9400, readToken: token), store: store)
/// try await collector.runService { port in print("listening on \(port)") }
/// ```
public final class Collector: Sendable {
    /// The configuration.
    public let configuration: CollectorConfiguration
    /// Where reports go.
    public let store: any ReportStore
    /// The Prometheus metrics.
    public let metrics: CollectorMetrics
    let limiter: RateLimiter
    let gate: InFlightGate
    let connections: ConnectionLimit
    let now: @Sendable () -> Date
    let page: (@Sendable (FleetSummary) -> String)?
    let logger: Logger

    /// A collector on `store`.
    /// - Parameters:
    ///   - page: renders the fleet page served at `/` (none: `/` is 404).
    ///   - now: the wall clock (summaries, pruning, received times).
    public init(
        configuration: CollectorConfiguration, store: any ReportStore, page: (@Sendable (FleetSummary) -> String)? = nil,
        now: @escaping @Sendable () -> Date = Date.init, logger: Logger = Logger(label: "clientctl.collect")
    ) {
        self.configuration = configuration
        self.store = store
        self.metrics = CollectorMetrics()
        self.limiter = RateLimiter(limits: configuration.rateLimits)
        self.gate = InFlightGate(
            limit: configuration.maxInFlight, readsPerAddress: configuration.readsPerAddress,
            minBodyBytesPerSecond: configuration.minBodyBytesPerSecond)
        self.connections = ConnectionLimit(perAddress: configuration.connectionsPerAddress, registry: self.metrics.registry)
        self.now = now
        self.page = page
        self.logger = logger
    }

    /// The router: `POST /v1/reports`, `GET /v1/fleet`, `GET /metrics`, `GET /healthz`, `GET /`.
    func router() -> Router<CollectorRequestContext> {
        let router = Router(context: CollectorRequestContext.self)
        let ingest = IngestRoute(
            store: store, limiter: limiter, gate: gate, metrics: metrics, bodyTimeout: configuration.bodyTimeout,
            admission: configuration.admission, now: now, logger: logger)
        router.post("/v1/reports") { request, context in await ingest.handle(request, context: context) }
        let reads = ReadRoutes(collector: self)
        router.get("/v1/fleet") { request, _ in await reads.fleet(request) }
        router.get("/v1/problems") { request, _ in await ProblemsRoute(collector: self).handle(request) }
        router.get("/metrics") { request, _ in reads.metrics(request) }
        let admin = AdminRoutes(collector: self)
        router.get("/v1/devices") { request, _ in await admin.devices(request) }
        router.post("/v1/devices/admit") { request, _ in await admin.change(request, .admit) }
        router.post("/v1/devices/reject") { request, _ in await admin.change(request, .reject) }
        router.post("/v1/devices/forget") { request, _ in await admin.change(request, .forget) }
        router.get("/v1/guard") { request, _ in await admin.guardFigures(request) }
        router.get("/healthz") { _, _ in Refusal.text("ok\n", contentType: "text/plain") }
        router.get("/") { request, _ in await reads.page(request) }
        return router
    }

    func application(onRunning: @escaping @Sendable (Int) async -> Void) -> some ApplicationProtocol {
        Application(
            router: router(),
            server: .http1(
                configuration: .init(
                    additionalChannelHandlers: [self.connections.handler()],
                    idleTimeout: TimeAmount(configuration.idleTimeout))),
            configuration: ApplicationConfiguration(
                address: .hostname(configuration.host, port: configuration.port), serverName: nil,
                availableConnectionsDelegate: MaximumAvailableConnections(configuration.maxConnections, logger: logger)),
            services: [PruneService(collector: self)]
                + (configuration.admitFile.map { [AdmitFileService(collector: self, path: $0, signer: configuration.admitFileKey)] } ?? []),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? 0) },
            logger: logger)
    }

    /// Listens until SIGTERM or SIGINT, pruning hourly, then closes the store.
    /// - Parameter onRunning: called with the bound port once listening.
    /// - Throws: ``FleetCollectorError`` `.cannotListen`.
    public func runService(onRunning: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        do {
            try await application(onRunning: onRunning).runService()
        } catch {
            await store.close()
            throw FleetCollectorError(.cannotListen, "cannot listen on \(configuration.host):\(configuration.port): \(error)")
        }
        await store.close()
    }

    /// Prunes now if due by `schedule` (the hourly service calls this; tests too).
    public func pruneIfDue(_ schedule: inout PruneSchedule) async {
        guard let cutoff = schedule.due(at: now()) else { return }
        do {
            let removed = try await store.prune(before: cutoff)
            if removed > 0 { logger.info("pruned \(removed) reports received before \(cutoff)") }
        } catch {
            logger.error("pruning failed: \(error)")
        }
    }
}

/// Prunes every minute it is due (hourly), until the service group shuts down.
struct PruneService: Service {
    let collector: Collector

    func run() async throws {
        var schedule = PruneSchedule(retentionDays: collector.configuration.retentionDays)
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            await collector.pruneIfDue(&schedule)
            try? await gracefulShutdownAwareSleep(seconds: 60)
        }
    }

    private func gracefulShutdownAwareSleep(seconds: Int) async throws {
        try await cancelWhenGracefulShutdown { try await Task.sleep(for: .seconds(seconds)) }
    }
}

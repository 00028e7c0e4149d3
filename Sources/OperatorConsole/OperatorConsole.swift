import AsyncHTTPClient
import ClientFoundation
import ConsoleAccess
import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// The operator's web console (docs/guides/console.md): the fleet, the channels' releases
/// and restrictions, the devices waiting for admission and the audit trail, in server-made
/// HTML without script; an operator halts, lifts or caps a release with the rollout key and
/// admits or rejects devices through the collector. Every act and every refused attempt
/// goes to the audit trail.
///
/// ```swift
/// let console = OperatorConsole(configuration: configuration)
/// try await console.runService { port in print("console on http://127.0.0.1:\(port)/") }
/// ```
public final class OperatorConsole: Sendable {
    /// The configuration.
    public let configuration: ConsoleConfiguration
    /// The wall clock (restrictions, the trail).
    let now: @Sendable () -> Date
    /// The monotonic clock (sessions, the login throttle).
    let uptime: @Sendable () -> Duration
    let sessions: SessionStore
    let throttle: LoginThrottle
    /// The operators file, read again only when it changed on disk (made at its first use).
    private let watchedOperators = Mutex<WatchedOperatorFile?>(nil)

    /// The operators file as it is on disk now: the copy read before while it did not
    /// change, so a request costs one `stat`, not a read and a parse.
    /// - Throws: ``ConsoleAccessError`` when the file is missing or broken (no one logs in).
    func operatorFile() throws(ConsoleAccessError) -> OperatorFile {
        if let watched = watchedOperators.withLock({ $0 }) { return try watched.current() }
        let watched = try WatchedOperatorFile(path: configuration.operators)
        watchedOperators.withLock { $0 = watched }
        return try watched.current()
    }
    let http: HTTPClient
    let logger: Logger
    /// The origins a POST may come from: the public URL's, and the one it listens on
    /// (known once it listens, for port 0); nil until then: every POST is refused.
    let origins: Mutex<OriginCheck?>
    /// Each operator's password hash at their latest login: a session whose operator's
    /// password changed since ends (``Gate/signedIn(_:)``). One entry per name.
    let loginHashes = Mutex<[String: String]>([:])

    /// A console.
    /// - Parameters:
    ///   - now: the wall clock.
    ///   - uptime: a monotonic clock's reading (tests advance a manual one); nil: the real
    ///     monotonic clock, made once here (a clock made at each reading would always read
    ///     zero, and no session would expire nor any throttle refill).
    public init(
        configuration: ConsoleConfiguration, now: @escaping @Sendable () -> Date = Date.init,
        uptime: (@Sendable () -> Duration)? = nil,
        logger: Logger = Logger(label: "clientctl.console")
    ) {
        self.configuration = configuration
        self.now = now
        let clock = MonotonicClock.continuous
        self.uptime = uptime ?? { clock.now }
        self.sessions = SessionStore()
        self.throttle = LoginThrottle()
        self.http = CollectorReader.makeClient()
        self.logger = logger
        self.origins = Mutex(nil)
    }

    deinit {
        // A console that never ran (or whose run threw before it could) still closes its client.
        try? http.syncShutdown()
    }

    var reader: CollectorReader {
        CollectorReader(
            client: http, base: configuration.collector, readToken: configuration.readToken, adminToken: configuration.adminToken)
    }

    var trail: Trail { Trail(path: configuration.audit, signers: configuration.signers, now: now, logger: logger) }

    /// The router: the pages, `/login`, `/logout`, `/act/ACT`, `/console.css`.
    func router() -> Router<ConsoleRequestContext> {
        let router = Router(context: ConsoleRequestContext.self)
        router.add(middleware: SecurityHeaders())
        let gate = Gate(console: self)
        let login = LoginRoutes(console: self, gate: gate)
        let pages = PageRoutes(console: self, gate: gate)
        let acts = ActRoutes(console: self, gate: gate)
        router.get("/console.css") { _, _ in Reply.css(ConsoleStyle.css) }
        router.get("/login") { request, _ in login.form(request) }
        router.post("/login") { request, context in await login.login(request, context: context) }
        router.post("/logout") { request, context in await login.logout(request, context: context) }
        router.get("/") { request, _ in await pages.overview(request) }
        router.get("/channel/{name}") { request, context in await pages.channel(request, name: context.parameters.get("name") ?? "") }
        router.get("/devices") { request, _ in await pages.devices(request) }
        router.get("/audit") { request, _ in await pages.audit(request) }
        router.post("/act/{act}") { request, context in await acts.act(request, context: context) }
        router.get("/act/{act}") { _, _ in
            Reply.text(.methodNotAllowed, "405: an act is a POST from the console's own form, never a GET", headers: [.allow: "POST"])
        }
        return router
    }

    /// HTTP/1.1, over TLS when ``ConsoleConfiguration/tlsFiles`` says.
    func server() throws -> HTTPServerBuilder {
        let http = HTTPServerBuilder.http1(configuration: .init(idleTimeout: .seconds(60)))
        guard let files = configuration.tlsFiles else { return http }
        do {
            let chain = try NIOSSLCertificate.fromPEMFile(files.certificate)
            let key = try NIOSSLPrivateKey(file: files.key, format: .pem)
            let tls = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
            return try .tls(http, tlsConfiguration: tls)
        } catch {
            throw OperatorConsoleError(.rejected, "--tls-cert \(files.certificate) / --tls-key \(files.key): not a PEM certificate and key: \(error)")
        }
    }

    func application(onRunning: @escaping @Sendable (Int) async -> Void) throws -> some ApplicationProtocol {
        Application(
            router: router(),
            server: try server(),
            configuration: ApplicationConfiguration(
                address: .hostname(configuration.host, port: configuration.port), serverName: nil),
            onServerRunning: { [self] channel in
                let port = channel.localAddress?.port ?? configuration.port
                do {
                    let check = try OriginCheck(
                        listeningOn: configuration.host, port: port, tls: configuration.tls, publicURL: configuration.publicURL)
                    origins.withLock { $0 = check }
                } catch {
                    logger.error("every POST is refused: \(error)")
                }
                await onRunning(port)
            },
            logger: logger)
    }

    /// Listens until SIGTERM or SIGINT.
    /// - Parameter onRunning: called with the bound port once listening.
    /// - Throws: ``OperatorConsoleError`` `.io` when it cannot listen.
    public func runService(onRunning: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        do {
            let application = try self.application(onRunning: onRunning)
            try await application.runService()
        } catch let error as OperatorConsoleError {
            try? await http.shutdown()
            throw error
        } catch {
            try? await http.shutdown()
            throw OperatorConsoleError(.io, "cannot listen on \(configuration.host):\(configuration.port): \(error)")
        }
        try? await http.shutdown()
    }
}

import ClientEngine
import Foundation
import Logging
import ServiceLifecycle
import ServingCore
import ShellLoopback
import ShellRules
import Synchronization

/// `--origin loopback`: the client served to the view over HTTP on 127.0.0.1 by the
/// shell's own serving core, for that view alone (docs/native-shell.md#origins-app-or-loopback-http).
///
/// A service of the shell's ``DeviceHost`` that starts before the engine: its ``run()``
/// binds the port and serves until the host shuts down, and the engine's start-up waits
/// for ``listening()``, as the view, whose origin names the port, does. The port is the one
/// `serve` would use for the app id, so the page's origin and storage survive restarts,
/// unless `--port` names another; when the derived port is taken, any free port (the
/// page's storage of that run lives under that other origin). Every load of the app's
/// start page carries a fresh one-time token that the server exchanges for the run's
/// cookie (``LaunchSecret``); the bridge stays WebKit's message handler.
final class LoopbackOrigin: Service, Sendable {
    private let core: ServingCore
    /// The ports tried, in order.
    private let ports: [Int]
    /// Requests wait for it (the engine's first version).
    private let ready: FirstVersionLatch
    private let log: EventLog
    private let pages = PageSink()
    /// The server that listens, and its port.
    private let bound = Mutex<(server: ShellOriginServer, port: Int)?>(nil)
    private let listens = Handshake<Int>()

    /// A listener for `core`, on `--port` if given, else on `serve`'s port for `app`.
    /// - Parameter ready: requests wait for it (the engine's first version).
    init(core: ServingCore, app: String, port requested: Int?, ready: FirstVersionLatch, log: EventLog) {
        self.core = core
        self.ports = requested.map { [$0] } ?? [ServerConfiguration.derivedPort(forApp: app), 0]
        self.ready = ready
        self.log = log
    }

    /// The bound port once the listener listens.
    /// - Throws: what ended ``run()`` before it could listen.
    func listening() async throws -> Int { try await listens.value() }

    /// `http://127.0.0.1:PORT` (once listening).
    var origin: String { "http://127.0.0.1:\(bound.withLock { $0?.port ?? 0 })" }

    /// The start page with a new one-time launch token (what the view loads).
    func startURI() -> String {
        let token = bound.withLock { $0?.server.secret.mintToken() } ?? ""
        return origin + "/?\(LaunchSecret.name)=\(token)"
    }

    /// Binds a port (the next one when one cannot be bound) and serves until the host shuts
    /// down; its requests still waiting for a first version end with it.
    /// - Throws: ``ShellError`` `.cannotListen` when no port could be bound, or the
    ///   listener's own error.
    func run() async throws {
        var failure: any Error = ShellError(.cannotListen, "no port to listen on")
        for (attempt, port) in ports.enumerated() {
            let server = makeServer(port: port)
            do {
                try await cancelWhenGracefulShutdown {
                    try await server.run { [self] boundPort in listened(server, port: boundPort, instead: attempt > 0) }
                }
                listens.resolve(.failure(CancellationError()))  // shut down before it listened
                return
            } catch {
                if listens.isResolved {
                    if Task.isShuttingDownGracefully || Task.isCancelled { return }  // cut at shutdown
                    throw error
                }
                failure = error
            }
        }
        listens.resolve(.failure(failure))
        throw failure
    }

    private func makeServer(port: Int) -> ShellOriginServer {
        // The listener's own log (its start, connections cut at exit) only when
        // CLIENTCTL_LOG_LEVEL asks for it; the serving core logs refused files itself.
        var logger = Logger(label: "clientctl.shell.loopback")
        logger.logLevel = EngineLogging.level() ?? .critical
        let (ready, pages) = (ready, pages)
        return ShellOriginServer(
            core: core, configuration: ServerConfiguration(port: port), waitForVersion: { await ready.wait() },
            onPage: { version in await pages.forward(version) }, logger: logger)
    }

    /// The server listens on `port`: the run's `listening` event, then the engine may start.
    private func listened(_ server: ShellOriginServer, port: Int, instead: Bool) {
        guard port > 0 else {
            listens.resolve(.failure(ShellError(.cannotListen, "cannot serve on 127.0.0.1:\(server.configuration.port)")))
            return
        }
        bound.withLock { $0 = (server, port) }
        if instead {
            ShellRun.printError("port \(ports[0]) is taken: serving on \(port) instead (this run's storage lives under \(origin))")
        }
        log.emit("listening", ["uri": origin + "/"])
        listens.resolve(.success(port))
    }

    /// The view gets the listener's origin and loads the start page with a token, and the
    /// version of every page served is recorded (on the GTK main thread, before the page's
    /// response is sent). Main thread, once ``listening()`` has returned.
    func attach(_ view: ShellView) {
        view.origin = origin
        view.startURI = { [self] in startURI() }
        pages.target { version in await GMain.run { view.documentServed(version: version) } }
    }
}

/// Where the versions of pages served go: set by ``LoopbackOrigin/attach(_:)`` (the view
/// learns its origin once the port is bound), read by every page request.
private final class PageSink: Sendable {
    private let body = Mutex<@Sendable (String) async -> Void>({ _ in })

    func target(_ body: @escaping @Sendable (String) async -> Void) { self.body.withLock { $0 = body } }

    func forward(_ version: String) async {
        let body = self.body.withLock { $0 }
        await body(version)
    }
}

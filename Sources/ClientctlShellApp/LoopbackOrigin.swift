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
/// The port is bound before the window is built (the view's origin names it): the one
/// `serve` would use for the app id, so the page's origin and storage survive restarts,
/// unless `--port` names another; when the derived port is taken, any free port (the
/// page's storage of that run lives under that other origin). Every load of the app's
/// start page carries a fresh one-time token that the server exchanges for the run's
/// cookie (``LaunchSecret``); the bridge stays WebKit's message handler.
final class LoopbackOrigin: Sendable {
    let server: ShellOriginServer
    let port: Int
    private let task: Task<Void, Never>
    private let pages: PageSink

    private init(server: ShellOriginServer, port: Int, task: Task<Void, Never>, pages: PageSink) {
        self.server = server
        self.port = port
        self.task = task
        self.pages = pages
    }

    /// `http://127.0.0.1:PORT`.
    var origin: String { "http://127.0.0.1:\(port)" }

    /// The start page with a new one-time launch token (what the view loads).
    func startURI() -> String { origin + "/?\(LaunchSecret.name)=\(server.secret.mintToken())" }

    /// Binds the port and starts serving `core` (waiting here, before GTK's loop runs).
    /// Requests wait for `ready` (the engine's first version).
    /// - Throws: ``ShellError`` `.cannotListen` when no port could be bound, or the
    ///   listener's own error when it stops before it binds.
    static func start(core: ServingCore, app: String, port requested: Int?, ready: FirstVersionLatch) throws -> LoopbackOrigin {
        let ports = requested.map { [$0] } ?? [ServerConfiguration.derivedPort(forApp: app), 0]
        var failure: any Error = ShellError(.cannotListen, "no port to listen on")
        for (attempt, port) in ports.enumerated() {
            do {
                let origin = try start(core: core, port: port, ready: ready)
                if attempt > 0 {
                    ShellRun.printError(
                        "port \(ports[0]) is taken: serving on \(origin.port) instead (this run's storage lives under \(origin.origin))")
                }
                return origin
            } catch {
                failure = error
            }
        }
        throw failure
    }

    private static func start(core: ServingCore, port: Int, ready: FirstVersionLatch) throws -> LoopbackOrigin {
        let pages = PageSink()
        // The listener's own log (its start, connections cut at exit) only when
        // CLIENTCTL_LOG_LEVEL asks for it; the serving core logs refused files itself.
        var logger = Logger(label: "clientctl.shell.loopback")
        logger.logLevel = EngineLogging.level() ?? .critical
        let server = ShellOriginServer(
            core: core, configuration: ServerConfiguration(port: port), waitForVersion: { await ready.wait() },
            onPage: { version in await pages.forward(version) }, logger: logger)
        let (bound, continuation) = AsyncStream.makeStream(of: Result<Int, any Error>.self)
        let task = Task {
            do {
                try await server.run { port in continuation.yield(.success(port)) }
            } catch {
                continuation.yield(.failure(error))
            }
            continuation.finish()
        }
        let first = Blocking.wait {
            var iterator = bound.makeAsyncIterator()
            return try await iterator.next()?.get() ?? 0
        }
        guard case .success(let boundPort) = first, boundPort > 0 else {
            task.cancel()
            if case .failure(let error) = first { throw error }
            throw ShellError(.cannotListen, "cannot serve on 127.0.0.1:\(port)")
        }
        return LoopbackOrigin(server: server, port: boundPort, task: task, pages: pages)
    }

    /// The view loads the start page with a token, and records the version of every page
    /// served (on the GTK main thread, before the page's response is sent).
    func attach(_ view: ShellView) {
        view.startURI = { [self] in startURI() }
        pages.target { version in await GMain.run { view.documentServed(version: version) } }
    }

    /// Stops listening.
    func stop() async {
        task.cancel()
        await task.value
    }
}

/// The listener as a service of the shell's `ServiceGroup`, after the agent: it listens
/// from ``LoopbackOrigin/start(core:app:port:ready:)`` on (the port is bound before the
/// window), and stops when the group shuts down, before the agent's updater does.
extension LoopbackOrigin: Service {
    func run() async {
        try? await gracefulShutdown()  // returns on cancellation too
        await stop()
    }
}

/// Where the versions of pages served go: set by ``LoopbackOrigin/attach(_:)`` (the view
/// is built after the port is bound), read by every page request.
private final class PageSink: Sendable {
    private let body = Mutex<@Sendable (String) async -> Void>({ _ in })

    func target(_ body: @escaping @Sendable (String) async -> Void) { self.body.withLock { $0 = body } }

    func forward(_ version: String) async {
        let body = self.body.withLock { $0 }
        await body(version)
    }
}

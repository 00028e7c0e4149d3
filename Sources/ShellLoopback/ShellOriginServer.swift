import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import LoopbackHTTP
import NIOCore
import ServingCore
import struct ServingCore.ServerConfiguration

/// The native shell's loopback http origin (`clientctl-shell --origin loopback`,
/// docs/native-shell.md#origins-app-or-loopback-http): the shell's own ``ServingCore``
/// over HTTP on 127.0.0.1, for its one web view.
///
/// `serve`'s listener rules hold — the ``HostGuard`` check first (`421` for a `Host` that
/// does not name this listener: DNS rebinding), GET and HEAD only, the connection cap and
/// the timeouts — and a ``LaunchSecret`` then turns away every request that is not the
/// view's (`403`). There are no control endpoints: the page's bridge stays the shell's
/// WebKit message handler, so nothing reachable over HTTP can acknowledge, switch or
/// check.
package final class ShellOriginServer: Sendable {
    package let configuration: ServerConfiguration
    /// The secret the view's launch URL carries.
    package let secret = LaunchSecret()
    let core: ServingCore
    let hostGuard: HostGuard
    /// Requests wait here until the engine has chosen the first version.
    let waitForVersion: @Sendable () async -> Void
    let onPage: @Sendable (String) async -> Void
    let logger: Logger

    /// - Parameters:
    ///   - core: the serving core (and version pointer) the shell's engine drives.
    ///   - waitForVersion: returns once a version is served; every request waits for it.
    ///   - onPage: called with the version of every page answered, before it is sent.
    package init(
        core: ServingCore, configuration: ServerConfiguration, waitForVersion: @escaping @Sendable () async -> Void,
        onPage: @escaping @Sendable (String) async -> Void, logger: Logger
    ) {
        self.core = core
        self.configuration = configuration
        self.hostGuard = HostGuard(port: configuration.port)
        self.waitForVersion = waitForVersion
        self.onPage = onPage
        self.logger = logger
    }

    /// `serve`'s first checks (``UpgradeCloseMiddleware``, the Host check), the secret (and
    /// no `/__clientctl/`), GET and HEAD only, the files.
    func router() -> Router<ServeRequestContext> {
        let router = Router(context: ServeRequestContext.self)
        router.add(middleware: UpgradeCloseMiddleware())
        router.add(middleware: HostCheckMiddleware(hostGuard: hostGuard))
        router.add(middleware: LaunchSecretMiddleware(secret: secret))
        router.add(middleware: FileMethodMiddleware())
        let files = FileRoute(core: core, onPage: onPage, slots: core.shellStreams)
        let waitForVersion = waitForVersion
        for path in ["/", "/**"] {
            for method in [HTTPRequest.Method.get, .head] {
                router.on(RouterPath(path), method: method) { request, context in
                    await waitForVersion()
                    return try await files.respond(to: request, context: context)
                }
            }
        }
        return router
    }

    /// Listens until the task is cancelled.
    /// - Parameter onRunning: called with the bound port once the server listens.
    /// - Throws: ``ShellLoopbackError`` `.cannotListen` when the port cannot be bound.
    package func run(onRunning: @escaping @Sendable (Int) async -> Void) async throws {
        // The view's connections ahead of a local flood: untrusted ones make room.
        let admission = ConnectionAdmission(
            limit: configuration.maxConnections, untrustedTimeout: TimeAmount(configuration.headerTimeout), secret: secret)
        let application = LoopbackApplication.make(
            router: router(), configuration: configuration, hostGuard: hostGuard,
            connectionHandlers: { [admission.handler()] }, connections: ConnectionAdmission.AcceptDelegate(admission: admission),
            onRunning: { channel in await onRunning(channel.localAddress?.port ?? 0) }, logger: logger)
        do {
            try await application.run()
        } catch {
            throw ShellLoopbackError(.cannotListen, "cannot serve on \(configuration.host):\(configuration.port): \(error)")
        }
    }
}

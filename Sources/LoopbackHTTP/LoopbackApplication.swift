import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import ServingCore
import struct ServingCore.ServerConfiguration

/// The one place a Hummingbird `Application` is built for a loopback listener: `serve`'s
/// (``ClientServer``) and the native shell's loopback origin. Both get the listener rules of
/// ``ServerConfiguration``: its address, the header and idle timeouts on every connection,
/// and the ``HostGuard`` told the port actually bound.
package enum LoopbackApplication {
    /// - Parameters:
    ///   - router: what answers requests.
    ///   - hostGuard: learns the bound port before `onRunning` is called.
    ///   - connectionHandlers: handlers put before the timeouts on each new connection.
    ///   - connections: when to stop accepting connections.
    ///   - group: the event loops to serve on (Hummingbird's shared group when nil).
    ///   - onRunning: called with the listening channel.
    package static func make(
        router: Router<ServeRequestContext>, configuration: ServerConfiguration, hostGuard: HostGuard,
        connectionHandlers: @escaping @Sendable () -> [any RemovableChannelHandler] = { [] },
        connections: some AvailableConnectionsDelegate, group: (any EventLoopGroup)? = nil,
        onRunning: @escaping @Sendable (any Channel) async -> Void, logger: Logger
    ) -> some ApplicationProtocol {
        let headerTimeout = TimeAmount(configuration.headerTimeout)
        let idleTimeout = TimeAmount(configuration.idleTimeout)
        return Application(
            router: router,
            server: .http1(
                configuration: .init(
                    additionalChannelHandlers: connectionHandlers()
                        + [ConnectionTimeoutHandler(headerTimeout: headerTimeout, idleTimeout: idleTimeout)])),
            configuration: ApplicationConfiguration(
                address: .hostname(configuration.host, port: configuration.port), serverName: nil,
                availableConnectionsDelegate: connections),
            onServerRunning: { channel in
                hostGuard.bind(port: channel.localAddress?.port ?? 0)
                await onRunning(channel)
            },
            eventLoopGroupProvider: group.map { .shared($0) } ?? .singleton,
            logger: logger)
    }
}

import AsyncHTTPClient
import ClientUpdater
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOSSL

/// The `HTTPClient`s of a process, one per distinct connection setup (proxy, trust
/// store, connect timeout), all on NIO's process-wide event loop group.
///
/// An `HTTPClient` owns a connection pool: sharing it is what lets the many small
/// requests of a Meteor update reuse connections. ``shared`` serves ``DefaultTransport``
/// for the life of the process (like AsyncHTTPClient's own `HTTPClient.shared`, it starts
/// no threads of its own); a registry made by a host or a test is closed with
/// ``shutdown()``, which closes every pooled connection.
package final class HTTPClientRegistry: Sendable {
    /// The process-wide registry behind ``DefaultTransport``.
    package static let shared = HTTPClientRegistry()

    /// What makes two clients different.
    struct Key: Hashable {
        var proxy: ProxyEndpoint?
        var caFile: String?
        var connectTimeout: Duration
        var maxConnectionsPerHost: Int
    }

    private struct State {
        var clients: [Key: HTTPClient] = [:]
        var isShutDown = false
    }

    private let state = NIOLockedValueBox(State())

    package init() {}

    /// Connections made so far are pooled per client; this many clients exist now.
    package var clientCount: Int { state.withLockedValue { $0.clients.count } }

    /// The client for `key`, made on first use.
    /// - Throws: ``HTTPTransportError`` `.configInvalid` when the CA file cannot be loaded;
    ///   `.shutDown` after ``shutdown()``.
    func client(for key: Key) throws -> HTTPClient {
        try state.withLockedValue { state in
            guard !state.isShutDown else { throw HTTPTransportError(.shutDown, "the HTTP transport was shut down") }
            if let client = state.clients[key] { return client }
            let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: try Self.configuration(key))
            state.clients[key] = client
            return client
        }
    }

    /// Closes every client and its pooled connections; later requests fail.
    package func shutdown() async throws {
        let clients = state.withLockedValue { state in
            state.isShutDown = true
            defer { state.clients.removeAll() }
            return Array(state.clients.values)
        }
        for client in clients { try await client.shutdown() }
    }

    static func configuration(_ key: Key) throws -> HTTPClient.Configuration {
        var tls = TLSConfiguration.makeClientConfiguration()
        if let caFile = key.caFile {
            do {
                tls.trustRoots = .certificates(try CAFile.load(caFile))
            } catch let error as HTTPTransportError {
                throw HTTPTransportError(.configInvalid, error.message, underlying: error)
            }
        }
        var config = HTTPClient.Configuration(
            tlsConfiguration: tls,
            redirectConfiguration: .disallow,  // HTTPTransport follows them under its own rule
            timeout: .init(connect: TimeAmount(key.connectTimeout)),
            connectionPool: .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: key.maxConnectionsPerHost),
            proxy: key.proxy.map(Self.proxy),
            decompression: .disabled)
        // A refused connection fails the request at once; the Downloader owns retries.
        config.connectionPool.retryConnectionEstablishment = false
        return config
    }

    static func proxy(_ endpoint: ProxyEndpoint) -> HTTPClient.Configuration.Proxy {
        switch endpoint.kind {
        case .socks5:
            return .socksServer(host: endpoint.host, port: endpoint.port)
        case .http:
            let auth = endpoint.credentials.map { HTTPClient.Authorization.basic(credentials: Data($0.utf8).base64EncodedString()) }
            return .server(host: endpoint.host, port: endpoint.port, authorization: auth)
        }
    }
}

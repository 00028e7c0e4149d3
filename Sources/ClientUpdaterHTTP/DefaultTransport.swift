import ClientUpdater
import DeviceSetup
import Foundation

/// The production `Transport`: `file:` URLs from the disk (`FileTransport`), `http:`
/// and `https:` through `HTTPTransport` on the process-wide `HTTPClientRegistry`.
///
/// Every `DefaultTransport` with the same settings shares one connection pool, so
/// making one per channel or per command costs nothing.
///
/// A request fails with this module's ``HTTPTransportError``: `.network` with a
/// `TransportFailure` (ClientUpdater's `Downloader` reads it through `TransportFailing` and
/// retries it when it is transient), `.unsupported` for a scheme it does not speak,
/// `.configInvalid` for settings it cannot use. A `file:` URL is read by ClientUpdater's
/// `FileTransport`, whose failures are ClientUpdater's.
public struct DefaultTransport: HeadFirstTransport {
    package let http: HTTPTransport

    /// - Parameter settings: proxies, trust store and timeouts; by default the
    ///   environment's proxies and the system trust store.
    public init(settings: HTTPTransportSettings = .fromEnvironment()) {
        http = HTTPTransport(settings: settings, registry: .shared)
    }

    /// The transport of a device root: its `config.json`'s `proxy` and `caFile`.
    public init(config: DeviceConfig, root: String? = nil) {
        self.init(settings: .forDevice(config, root: root))
    }

    public func get(
        _ request: TransportRequest,
        head: @Sendable (TransportResponse) throws -> Void,
        sink: @Sendable (UnsafeRawBufferPointer) throws -> Void
    ) async throws -> TransportResponse {
        switch request.url.scheme?.lowercased() {
        case "file":
            return try FileTransport.get(request, head: head, sink: sink)
        case "http", "https":
            return try await http.get(request, head: head, sink: sink)
        default:
            throw HTTPTransportError(.unsupported, "GET \(request.url.absoluteString): unsupported URL scheme (use https:, http: or file:)")
        }
    }

    /// `http:` and `https:` through `HTTPTransport`; a `file:` URL cannot take a request
    /// with a body (`.unsupported`, naming it).
    public func exchange(_ request: TransportExchange) async throws -> TransportReply {
        switch request.url.scheme?.lowercased() {
        case "http", "https":
            return try await http.exchange(request)
        case "file":
            throw HTTPTransportError(
                .unsupported, "\(request.method) \(request.url.absoluteString): a file: URL takes no request with a body (use https: or http:)")
        default:
            throw HTTPTransportError(
                .unsupported, "\(request.method) \(request.url.absoluteString): unsupported URL scheme (use https: or http:)")
        }
    }
}

extension Downloader {
    /// A downloader on ``DefaultTransport`` (the environment's proxies, the system trust store).
    package init(
        retry: RetryPolicy = .standard, sleeper: any Sleeper = TaskSleeper(), idleTimeout: Duration = .seconds(30),
        headers: [String: String] = [:]
    ) {
        self.init(transport: DefaultTransport(), retry: retry, sleeper: sleeper, idleTimeout: idleTimeout, headers: headers)
    }
}

import ClientFoundation
import ClientUpdater
import DeviceSetup
import Foundation

/// How ``DefaultTransport`` connects over `http:` and `https:`: proxies, trust, timeouts,
/// identity.
public struct HTTPTransportSettings: Sendable {
    /// Which proxy each URL goes through.
    public var proxies: ProxySettings
    /// A PEM file of CA certificates to trust *instead of* the system trust store (like
    /// curl's `--cacert`); `nil` for the system store.
    public var caFile: String?
    /// Give up connecting (TCP, proxy handshake and TLS) after this long.
    public var connectTimeout: Duration
    /// Redirects followed per request (curl `-L --max-redirs`).
    public var maxRedirects: Int
    /// Parallel HTTP/1.1 connections to one host.
    public var maxConnectionsPerHost: Int
    /// Sent as `User-Agent`.
    public var userAgent: String
    /// A problem found while reading the settings, thrown by the first request (so a
    /// transport can be made by a non-throwing initializer).
    var deferredError: HTTPTransportError?

    public static let defaultUserAgent = "clientctl/\(ClientctlVersion.string)"

    public init(
        proxies: ProxySettings = .direct, caFile: String? = nil, connectTimeout: Duration = .seconds(15), maxRedirects: Int = 10,
        maxConnectionsPerHost: Int = 6, userAgent: String = defaultUserAgent
    ) {
        self.proxies = proxies
        self.caFile = caFile
        self.connectTimeout = connectTimeout
        self.maxRedirects = maxRedirects
        self.maxConnectionsPerHost = max(1, maxConnectionsPerHost)
        self.userAgent = userAgent
    }

    /// The defaults with proxies from this process's environment (`HTTPS_PROXY`, …).
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> HTTPTransportSettings {
        var settings = HTTPTransportSettings()
        do {
            settings.proxies = try ProxySettings(environment: environment)
        } catch let error as HTTPTransportError {
            settings.deferredError = error
        } catch {
            settings.deferredError = HTTPTransportError(.configInvalid, "\(error)")
        }
        return settings
    }

    /// The settings of a device root: `config.json`'s `proxy` and `caFile` over the
    /// environment's proxies. A relative `caFile` is resolved against the root.
    /// - Throws: ``HTTPTransportError`` `.configInvalid` for a proxy that cannot be parsed or a
    ///   `caFile` that cannot be read or holds no PEM certificate.
    public init(
        config: DeviceConfig, root: String? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws {
        self.init()
        proxies = try ProxySettings(environment: environment, explicit: config.proxy)
        if let file = config.caFile, !file.isEmpty {
            let path = file.hasPrefix("/") || root == nil ? file : (root ?? "") + "/" + file
            try Self.checkCAFile(path)
            caFile = path
        }
    }

    /// Like ``init(config:root:environment:)`` but never throws: a problem is thrown by the
    /// first request instead.
    public static func forDevice(_ config: DeviceConfig, root: String? = nil) -> HTTPTransportSettings {
        do {
            return try HTTPTransportSettings(config: config, root: root)
        } catch {
            var settings = HTTPTransportSettings()
            settings.deferredError = error as? HTTPTransportError ?? HTTPTransportError(.configInvalid, "\(error)")
            return settings
        }
    }

    /// Checks that `path` is a CA file the transport can load (``CAFile/load(_:)``).
    /// - Throws: ``HTTPTransportError`` `.configInvalid`, with ``CAFile``'s message and its
    ///   error as the underlying cause.
    package static func checkCAFile(_ path: String) throws {
        do {
            _ = try CAFile.load(path)
        } catch let error as HTTPTransportError {
            throw HTTPTransportError(.configInvalid, error.message, underlying: error)
        }
    }
}

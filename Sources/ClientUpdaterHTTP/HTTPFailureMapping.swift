import AsyncHTTPClient
import ClientUpdater
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// Turns what AsyncHTTPClient and NIO throw into a ``TransportFailure``, in our words:
/// a message names the proxy a request went through (`host:port`, never its
/// credentials) and never carries a TLS library's raw error text.
enum HTTPFailureMapping {
    /// What was known about the transfer when it failed.
    struct Context {
        var connectTimeout: Duration
        var timeLimit: Duration?
        /// Body bytes delivered so far and the promised `Content-Length`, once a head arrived.
        var received: Int64 = 0
        var declared: Int64?
        /// The proxy the request went through, if any.
        var proxy: ProxyEndpoint?
    }

    static func failure(_ error: any Error, _ context: Context) -> TransportFailure {
        if let declared = context.declared, context.received < declared, isConnectionLoss(error) {
            return .truncated(received: context.received, expected: declared)
        }
        let proxy = context.proxy?.address
        if let client = error as? HTTPClientError {
            switch client {
            case .deadlineExceeded: return .deadlineExceeded(context.timeLimit ?? .zero)
            case .connectTimeout, .socksHandshakeTimeout, .httpProxyHandshakeTimeout:
                return .connectTimedOut(context.connectTimeout)
            case .tlsHandshakeTimeout: return .tls("the TLS handshake timed out" + through(proxy))
            case .remoteConnectionClosed, .readTimeout, .writeTimeout: return reset(proxy)
            case .invalidProxyResponse: return .proxy("the proxy \(proxy ?? "") refused the CONNECT tunnel (it answered with an error)")
            case .proxyAuthenticationRequired:
                let what =
                    context.proxy?.credentials == nil
                    ? "it wants a user and password (http://user:password@host:port in the proxy URL)"
                    : "it refused the user and password of the proxy URL"
                return .proxyRejected("the proxy \(proxy ?? "") answered 407 Proxy Authentication Required: \(what)")
            default: return .other("\(client)")
            }
        }
        if let connection = error as? NIOConnectionError {
            if connection.connectionErrors.isEmpty, connection.dnsAError != nil || connection.dnsAAAAError != nil {
                return .dns
            }
            let refused = connection.connectionErrors.contains { ($0.error as? IOError)?.errnoCode == ECONNREFUSED }
            let failure: TransportFailure = refused ? .refused : .other("cannot connect to \(connection.host):\(connection.port)")
            return proxy != nil ? .proxy("cannot reach the proxy \(connection.host):\(connection.port): \(failure)") : failure
        }
        if let io = error as? IOError {
            switch io.errnoCode {
            case ECONNREFUSED: return proxy.map { .proxy("the proxy \($0) refused the connection") } ?? .refused
            case ECONNRESET, EPIPE: return reset(proxy)
            case ETIMEDOUT: return .connectTimedOut(context.connectTimeout)
            default: return .other("\(io)")
            }
        }
        if error is ChannelError, case .connectTimeout = error as? ChannelError {
            return .connectTimedOut(context.connectTimeout)
        }
        if error is SocketAddressError { return .dns }
        if error is NIOSSLError || error is BoringSSLError || error is NIOSSLExtraError {
            return .tls(tlsDescription(error) + through(proxy))
        }
        if let parser = error as? HTTPParserError {
            return parser == .invalidEOFState ? reset(proxy) : .other("malformed HTTP response: \(parser)")
        }
        return .other("\(error)")
    }

    /// A lost connection; through a proxy, the proxy is named (it, or the server behind
    /// its tunnel, reset it: the client cannot tell which).
    private static func reset(_ proxy: String?) -> TransportFailure {
        guard let proxy else { return .reset }
        return .proxy("connection reset by the proxy \(proxy) (or by the server behind it)")
    }

    private static func through(_ proxy: String?) -> String {
        proxy.map { " (through the proxy \($0))" } ?? ""
    }

    /// A connection that ended early (the body may be truncated).
    static func isConnectionLoss(_ error: any Error) -> Bool {
        if let client = error as? HTTPClientError { return client == .remoteConnectionClosed }
        if let io = error as? IOError { return io.errnoCode == ECONNRESET || io.errnoCode == EPIPE }
        if let parser = error as? HTTPParserError { return parser == .invalidEOFState }
        if let tls = error as? NIOSSLError { return tls == .uncleanShutdown }
        return false
    }

    /// The TLS problem in our words, with BoringSSL's reason code when it gives one
    /// (`CERTIFICATE_VERIFY_FAILED`), never its raw text: that names the library's source
    /// files by their absolute paths on the build machine.
    static func tlsDescription(_ error: any Error) -> String {
        let reason = reasonCode(in: "\(error)")
        switch reason {
        case "CERTIFICATE_VERIFY_FAILED":
            return "the server's certificate failed verification (CERTIFICATE_VERIFY_FAILED): it is expired or not yet valid, "
                + "issued for another host name, or not signed by a trusted CA (set caFile in config.json for a private CA)"
        case "WRONG_VERSION_NUMBER", "HTTP_REQUEST", "HTTPS_PROXY_REQUEST":
            return "the server did not answer in TLS (\(reason ?? "")): an http: server on an https: URL, or a proxy answering in plain text"
        default: break
        }
        if let ssl = error as? NIOSSLExtraError, ssl == .failedToValidateHostname {
            return "the server's certificate is not valid for this host name"
        }
        if let ssl = error as? NIOSSLError, ssl == .uncleanShutdown {
            return "the connection closed in the middle of TLS"
        }
        if let reason { return "the TLS handshake failed (\(reason))" }
        // A case name such as `handshakeFailed`, without its payload.
        let name = "\(error)".prefix { $0.isLetter || $0.isNumber }
        return name.isEmpty ? "the TLS handshake failed" : "the TLS handshake failed (\(name))"
    }

    /// BoringSSL's reason code in an error's text (`…:OPENSSL_internal:REASON at /path…`).
    static func reasonCode(in text: String) -> String? {
        guard let marker = text.range(of: "OPENSSL_internal:") else { return nil }
        let code = text[marker.upperBound...].prefix { $0.isUppercase || $0.isNumber || $0 == "_" }
        return code.isEmpty ? nil : String(code)
    }
}

import AsyncHTTPClient
import ClientUpdater
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// Turns what AsyncHTTPClient and NIO throw into a ``TransportFailure``.
enum HTTPFailureMapping {
    /// What was known about the transfer when it failed.
    struct Context {
        var connectTimeout: Double
        var timeLimit: Double?
        /// Body bytes delivered so far and the promised `Content-Length`, once a head arrived.
        var received: Int64 = 0
        var declared: Int64?
        var viaProxy: Bool = false
    }

    static func failure(_ error: any Error, _ context: Context) -> TransportFailure {
        if let declared = context.declared, context.received < declared, isConnectionLoss(error) {
            return .truncated(received: context.received, expected: declared)
        }
        if let client = error as? HTTPClientError {
            switch client {
            case .deadlineExceeded: return .deadlineExceeded(seconds: context.timeLimit ?? 0)
            case .connectTimeout, .socksHandshakeTimeout, .httpProxyHandshakeTimeout:
                return .connectTimedOut(seconds: context.connectTimeout)
            case .tlsHandshakeTimeout: return .tls("handshake timed out")
            case .remoteConnectionClosed, .readTimeout, .writeTimeout: return .reset
            case .invalidProxyResponse: return .proxy("the proxy refused the CONNECT tunnel")
            case .proxyAuthenticationRequired: return .proxy("the proxy requires authentication (407)")
            default: return .other("\(client)")
            }
        }
        if let connection = error as? NIOConnectionError {
            if connection.connectionErrors.isEmpty, connection.dnsAError != nil || connection.dnsAAAAError != nil {
                return .dns
            }
            let refused = connection.connectionErrors.contains { ($0.error as? IOError)?.errnoCode == ECONNREFUSED }
            let failure: TransportFailure = refused ? .refused : .other("cannot connect to \(connection.host):\(connection.port)")
            return context.viaProxy ? .proxy("cannot reach the proxy \(connection.host):\(connection.port): \(failure)") : failure
        }
        if let io = error as? IOError {
            switch io.errnoCode {
            case ECONNREFUSED: return context.viaProxy ? .proxy("the proxy refused the connection") : .refused
            case ECONNRESET, EPIPE: return .reset
            case ETIMEDOUT: return .connectTimedOut(seconds: context.connectTimeout)
            default: return .other("\(io)")
            }
        }
        if error is ChannelError, case .connectTimeout = error as? ChannelError {
            return .connectTimedOut(seconds: context.connectTimeout)
        }
        if error is SocketAddressError { return .dns }
        if error is NIOSSLError || error is BoringSSLError || error is NIOSSLExtraError {
            return .tls(tlsDescription(error))
        }
        if let parser = error as? HTTPParserError {
            return parser == .invalidEOFState ? .reset : .other("malformed HTTP response: \(parser)")
        }
        return .other("\(error)")
    }

    /// A connection that ended early (the body may be truncated).
    static func isConnectionLoss(_ error: any Error) -> Bool {
        if let client = error as? HTTPClientError { return client == .remoteConnectionClosed }
        if let io = error as? IOError { return io.errnoCode == ECONNRESET || io.errnoCode == EPIPE }
        if let parser = error as? HTTPParserError { return parser == .invalidEOFState }
        if let tls = error as? NIOSSLError { return tls == .uncleanShutdown }
        return false
    }

    /// Names the certificate problem when BoringSSL reports one.
    static func tlsDescription(_ error: any Error) -> String {
        let text = "\(error)"
        if text.contains("CERTIFICATE_VERIFY_FAILED") {
            return "the server's certificate failed verification (CERTIFICATE_VERIFY_FAILED): it is expired or not yet valid, "
                + "issued for another host name, or not signed by a trusted CA (set caFile in config.json for a private CA)"
        }
        if let ssl = error as? NIOSSLExtraError, ssl == .failedToValidateHostname {
            return "the server's certificate is not valid for this host name"
        }
        return text
    }
}

import AsyncHTTPClient
import ClientUpdater
import Foundation
import NIOCore
import NIOHTTP1

/// The production ``Transport`` for `http:` and `https:` on AsyncHTTPClient.
///
/// - Streaming with back-pressure: the next chunk is read from the connection only after
///   the sink returned, so a slow sink slows the server down (TCP flow control) instead
///   of filling memory.
/// - A request's ``TransportRequest/rateLimiter`` (the device's download rate cap) is kept
///   the same way: after each chunk the transfer waits as long as the cap asks before
///   reading the next one.
/// - Connections are pooled per ``HTTPClientRegistry`` client (keep-alive for HTTP/1.1,
///   HTTP/2 over TLS when the server offers it).
/// - `Accept-Encoding: identity` and no decoding: the bytes a signature or hash covers
///   reach the sink untouched, whatever `Content-Encoding` the server sends.
/// - Redirects follow ``RedirectRule`` (at most ``HTTPTransportSettings/maxRedirects``,
///   never from `https:` to `http:`), unless the request says
///   ``TransportRequest/followsRedirects`` `false`: then a 3xx is returned as it came.
/// - Timeouts: connect (``HTTPTransportSettings/connectTimeout``), stall (no byte for
///   ``TransportRequest/idleTimeout`` while waiting for the server) and an
///   overall ``TransportRequest/timeLimit``.
/// - Proxies per ``ProxySettings``; trust from the system store or
///   ``HTTPTransportSettings/caFile``.
/// - Failures below HTTP throw this module's ``HTTPTransportError`` `.network` with a
///   `TransportFailure`; HTTP statuses are returned. Cancelling the calling task cancels
///   the request. The `Downloader` reads the error through `TransportFailing` and retries
///   what the `TransportFailure` calls transient (as AsyncHTTPClient's errors are the ones
///   NIO's channel reports); settings it cannot use are `.configInvalid`.
package struct HTTPTransport: HeadFirstTransport {
    package let settings: HTTPTransportSettings
    let registry: HTTPClientRegistry

    /// - Parameter registry: whose clients (and connection pools) to use; the host or
    ///   test that makes its own registry shuts it down.
    package init(settings: HTTPTransportSettings = .fromEnvironment(), registry: HTTPClientRegistry = .shared) {
        self.settings = settings
        self.registry = registry
    }

    package func get(
        _ request: TransportRequest,
        head: @Sendable (TransportResponse) throws -> Void,
        sink: @Sendable (UnsafeRawBufferPointer) throws -> Void
    ) async throws -> TransportResponse {
        if let error = settings.deferredError { throw error }
        switch request.url.scheme?.lowercased() {
        case "http", "https": break
        default:
            throw HTTPTransportError(.unsupported, "GET \(request.url.absoluteString): unsupported URL scheme for HTTP (use https: or http:)")
        }
        // AsyncHTTPClient's deadline covers the wait for the head; the watch covers the body.
        let deadline = request.timeLimit.map { NIODeadline.now() + TimeAmount($0) } ?? .distantFuture
        let stall = StallWatch(idleTimeout: request.idleTimeout, timeLimit: request.timeLimit)
        return try await withoutActuallyEscaping(head) { head in
            try await withoutActuallyEscaping(sink) { sink in
                // The exchange races the stall watch; the loser is cancelled, and both have
                // finished before this returns, so head and sink never outlive the call.
                try await withThrowingTaskGroup(of: TransportResponse.self) { group in
                    group.addTask { try await exchange(request, deadline: deadline, stall: stall, head: head, sink: sink) }
                    group.addTask { () async throws -> TransportResponse in try await stall.watch(url: request.url) }
                    defer { group.cancelAll() }
                    guard let response = try await group.next() else { throw CancellationError() }
                    return response
                }
            }
        }
    }

    private func exchange(
        _ request: TransportRequest, deadline: NIODeadline, stall: StallWatch,
        head: @Sendable (TransportResponse) throws -> Void,
        sink: @Sendable (UnsafeRawBufferPointer) throws -> Void
    ) async throws -> TransportResponse {
        var url = request.url
        var hop = 0
        while true {
            let proxy = settings.proxies.proxy(for: url)
            var context = HTTPFailureMapping.Context(
                connectTimeout: settings.connectTimeout, timeLimit: request.timeLimit,
                proxy: proxy)
            let client = try registry.client(
                for: .init(
                    proxy: proxy, caFile: settings.caFile, connectTimeout: settings.connectTimeout,
                    maxConnectionsPerHost: settings.maxConnectionsPerHost))
            let response: HTTPClientResponse
            do {
                stall.waiting()
                response = try await client.execute(makeRequest(url, request.headers), deadline: deadline)
            } catch {
                throw await explained(Self.mapped(error, url: url, context), url: url, direct: proxy == nil)
            }
            let status = Int(response.status.code)
            hop += 1
            if request.followsRedirects,
                let next = try RedirectRule.next(
                    from: url, status: status, location: response.headers.first(name: "location"),
                    hop: hop, maxRedirects: settings.maxRedirects)
            {
                // Read the (small) redirect body so the connection goes back to the pool;
                // past 64 KiB stop reading, which closes the connection instead.
                var drained = 0
                do {
                    for try await chunk in response.body {
                        drained += chunk.readableBytes
                        if drained > 64 * 1024 { break }
                    }
                } catch {
                    throw Self.mapped(error, url: url, context)
                }
                url = next
                continue
            }
            stall.arrived()
            let answer = TransportResponse(status: status, headers: Self.headers(response.headers))
            try head(answer)
            if status != 304, status != 204, answer[header: "content-encoding"] == nil {
                context.declared = answer[header: "content-length"].flatMap { Int64($0) }
            }
            var body = response.body.makeAsyncIterator()
            while true {
                stall.waiting()
                let chunk: ByteBuffer?
                do {
                    chunk = try await body.next()
                } catch {
                    throw Self.mapped(error, url: url, context)
                }
                stall.arrived()
                // Checked here too, so a body that arrives late fails even when the watch
                // task did not get to run in time.
                if stall.isOverTime() {
                    throw HTTPTransportError.network(url, .deadlineExceeded(request.timeLimit ?? .zero))
                }
                guard let chunk else { break }
                try chunk.withUnsafeReadableBytes { try sink($0) }
                context.received += Int64(chunk.readableBytes)
                // The cap waits here, between chunks and outside the stall watch's waiting:
                // the body is not read meanwhile, so the socket's buffers fill and TCP slows
                // the sender down (nothing is read ahead into memory).
                if let limiter = request.rateLimiter { try await limiter.admit(chunk.readableBytes) }
            }
            if let declared = context.declared, context.received < declared {
                throw HTTPTransportError.network(url, .truncated(received: context.received, expected: declared))
            }
            return answer
        }
    }

    /// A certificate failure on a direct connection, with its reason when the certificate's
    /// dates give it (``CertificateDiagnosis``).
    private func explained(_ error: any Error, url: URL, direct: Bool) async -> any Error {
        guard direct, let failure = (error as? HTTPTransportError)?.transportFailure, case .tls(let text) = failure,
            text.contains("CERTIFICATE_VERIFY_FAILED"), let host = url.host
        else { return error }
        let port = url.port ?? 443
        guard let reason = await CertificateDiagnosis.validityProblem(host: host, port: port, timeout: settings.connectTimeout) else {
            return error
        }
        return HTTPTransportError.network(url, .tls("the server's certificate failed verification: \(reason)"))
    }

    private func makeRequest(_ url: URL, _ headers: [String: String]) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .GET
        request.headers.add(name: "User-Agent", value: settings.userAgent)
        request.headers.add(name: "Accept-Encoding", value: "identity")
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
            request.headers.replaceOrAdd(name: name, value: value)
        }
        return request
    }

    private static func headers(_ fields: HTTPHeaders) -> [String: String] {
        var out: [String: String] = [:]
        for (name, value) in fields {
            let key = name.lowercased()
            out[key] = out[key].map { $0 + ", " + value } ?? value
        }
        return out
    }

    private static func mapped(_ error: any Error, url: URL, _ context: HTTPFailureMapping.Context) -> any Error {
        if error is CancellationError || error is HTTPTransportError { return error }
        if let client = error as? HTTPClientError, client == .cancelled { return CancellationError() }
        if Task.isCancelled { return CancellationError() }
        return HTTPTransportError.network(url, HTTPFailureMapping.failure(error, context))
    }
}

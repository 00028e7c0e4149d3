import AsyncHTTPClient
import ClientUpdater
import Foundation
import NIOCore
import NIOHTTP1

extension HTTPTransport {
    /// Sends `request` on the same clients as ``get(_:head:sink:)`` (proxies, trust store,
    /// connect timeout, pooled connections) and reads at most
    /// `TransportExchange.maxResponseBytes` of the answer; no redirect is followed.
    ///
    /// The idle timeout covers every wait for the server (the head, each chunk); the time
    /// limit covers the whole exchange, connecting included.
    /// - Throws: ``HTTPTransportError`` `.network` with a `TransportFailure`; `.unsupported` for
    ///   a scheme other than `http:`/`https:`. HTTP statuses are returned.
    package func exchange(_ request: TransportExchange) async throws -> TransportReply {
        if let error = settings.deferredError { throw error }
        switch request.url.scheme?.lowercased() {
        case "http", "https": break
        default:
            throw HTTPTransportError(
                .unsupported, "\(request.method) \(request.url.absoluteString): unsupported URL scheme for HTTP (use https: or http:)")
        }
        let deadline = NIODeadline.now() + TimeAmount(request.timeLimit)
        let stall = StallWatch(idleTimeout: request.idleTimeout, timeLimit: request.timeLimit)
        return try await withThrowingTaskGroup(of: TransportReply.self) { group in
            group.addTask { try await send(request, deadline: deadline, stall: stall) }
            group.addTask { () async throws -> TransportReply in try await stall.watch(url: request.url) }
            defer { group.cancelAll() }
            guard let reply = try await group.next() else { throw CancellationError() }
            return reply
        }
    }

    private func send(_ request: TransportExchange, deadline: NIODeadline, stall: StallWatch) async throws -> TransportReply {
        let url = request.url
        let proxy = settings.proxies.proxy(for: url)
        let context = HTTPFailureMapping.Context(connectTimeout: settings.connectTimeout, timeLimit: request.timeLimit, proxy: proxy)
        let client = try registry.client(
            for: .init(
                proxy: proxy, caFile: settings.caFile, connectTimeout: settings.connectTimeout,
                maxConnectionsPerHost: settings.maxConnectionsPerHost))
        var outgoing = HTTPClientRequest(url: url.absoluteString)
        outgoing.method = HTTPMethod(rawValue: request.method)
        outgoing.headers.add(name: "User-Agent", value: settings.userAgent)
        for (name, value) in request.headers.sorted(by: { $0.key < $1.key }) {
            outgoing.headers.replaceOrAdd(name: name, value: value)
        }
        outgoing.body = .bytes(ByteBuffer(bytes: request.body))
        let response: HTTPClientResponse
        do {
            stall.waiting()
            response = try await client.execute(outgoing, deadline: deadline)
        } catch {
            throw Self.exchangeFailure(error, url: url, context)
        }
        stall.arrived()
        var headers: [String: String] = [:]
        for (name, value) in response.headers {
            let key = name.lowercased()
            headers[key] = headers[key].map { $0 + ", " + value } ?? value
        }
        var body = Data()
        var truncated = false
        var chunks = response.body.makeAsyncIterator()
        while true {
            stall.waiting()
            let chunk: ByteBuffer?
            do {
                chunk = try await chunks.next()
            } catch {
                throw Self.exchangeFailure(error, url: url, context)
            }
            stall.arrived()
            if stall.isOverTime() {
                throw HTTPTransportError.network(url, .deadlineExceeded(request.timeLimit))
            }
            guard let chunk else { break }
            let room = TransportExchange.maxResponseBytes - body.count
            if chunk.readableBytes > room {
                // Stop reading: the connection is closed rather than drained.
                chunk.withUnsafeReadableBytes { body.append(contentsOf: $0.prefix(room)) }
                truncated = true
                break
            }
            chunk.withUnsafeReadableBytes { body.append(contentsOf: $0) }
        }
        return TransportReply(status: Int(response.status.code), headers: headers, body: body, truncated: truncated)
    }

    private static func exchangeFailure(_ error: any Error, url: URL, _ context: HTTPFailureMapping.Context) -> any Error {
        if error is CancellationError || error is HTTPTransportError { return error }
        if let client = error as? HTTPClientError, client == .cancelled { return CancellationError() }
        if Task.isCancelled { return CancellationError() }
        return HTTPTransportError.network(url, HTTPFailureMapping.failure(error, context))
    }
}

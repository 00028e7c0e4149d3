import ClientUpdater
import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// The `/__clientctl/` endpoints the shim's `serve` backend calls (docs/serving.md#control-endpoints).
///
/// POSTs must carry `X-Clientctl-Shim: 1`: a page from another origin cannot send that
/// header without a CORS preflight, which this server never grants.
struct ControlResponder: Sendable {
    static let prefix = "/__clientctl/"
    static let shimHeader = HTTPFields.Element.Name.token("X-Clientctl-Shim")
    let heartbeatSeconds: Double
    let logger: Logger
    /// Open event streams, capped.
    let streams: StreamGate

    func respond(
        path: String, request: Request, handler: (any ControlHandler)?,
        connectionClosed: EventLoopFuture<Void>? = nil
    ) async -> Response {
        let name = path.dropFirst(Self.prefix.count)
        let method: HTTPRequest.Method
        switch name {
        case "status", "events": method = .get
        case "startup-complete", "check", "switch-to-pending": method = .post
        default: return Self.json(.notFound, ["error": "no control endpoint \(path)"])
        }
        guard request.method == method || (method == .get && request.method == .head) else {
            var response = Self.json(.methodNotAllowed, ["error": "\(path) accepts \(method.rawValue) only"])
            response.headers[.allow] = method.rawValue
            return response
        }
        if method == .post, request.headers[Self.shimHeader] != "1" {
            return Self.json(.forbidden, ["error": "\(path) needs the X-Clientctl-Shim: 1 header"])
        }
        guard let handler else {
            return Self.json(.serviceUnavailable, ["error": "no update agent is attached to this server"])
        }
        var version: String?
        if method == .post {
            switch await PageVersion.read(request) {
            case .success(let named): version = named
            case .failure(let refusal): return Self.json(.badRequest, ["error": "\(path): \(refusal.message)"])
            }
        }
        do {
            switch name {
            case "status": return try Self.status(await handler.status())
            case "startup-complete": return try Self.status(await handler.startupDidComplete(version: version))
            case "check": return try Self.status(await handler.checkForUpdates(version: version))
            case "switch-to-pending": return try Self.status(await handler.switchToPendingVersion(version: version))
            default: return events(handler: handler, connectionClosed: connectionClosed)
            }
        } catch {
            let message = (error as? any ClientctlError)?.message ?? "\(error)"
            logger.warning("control \(name) failed: \(message)")
            // A page of another version than the one on trial (or served): refused, nothing changed.
            let conflict = (error as? UpdaterError)?.code == .conflict
            return Self.json(conflict ? .conflict : .internalServerError, ["error": message])
        }
    }

    /// A server-sent event stream: `updateAvailable` and `error` events (plus
    /// `downloadProgress`), a comment every heartbeat; a pending version is announced
    /// as soon as the stream opens. Ends on graceful shutdown or the moment the client's
    /// connection closes; over ``StreamGate/limit`` open streams a new one is refused (503).
    private func events(handler: any ControlHandler, connectionClosed: EventLoopFuture<Void>?) -> Response {
        guard let ticket = streams.open() else {
            return Self.json(.serviceUnavailable, ["error": "too many open event streams (\(streams.limit)); try again later"])
        }
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream; charset=utf-8"
        headers[.cacheControl] = "no-store"
        let heartbeat = heartbeatSeconds
        let body = ResponseBody { writer in
            defer { ticket.close() }
            let (merged, continuation) = AsyncStream<String>.makeStream()
            connectionClosed?.whenComplete { _ in continuation.finish() }
            let upstream = await handler.events()
            let forward = Task {
                if let pending = try? await handler.status().pending {
                    continuation.yield(Self.frame(.updateAvailable(version: pending)))
                }
                for await event in upstream { continuation.yield(Self.frame(event)) }
                continuation.finish()
            }
            let beat = Task {
                while !Task.isCancelled {
                    try await Task.sleep(nanoseconds: UInt64(heartbeat * 1_000_000_000))
                    continuation.yield(": keep-alive\n\n")
                }
            }
            defer {
                forward.cancel()
                beat.cancel()
            }
            try await writer.write(ByteBuffer(string: "retry: 2000\n: connected\n\n"))
            // On graceful shutdown the stream finishes, so the loop ends and so does the request.
            try await withGracefulShutdownHandler {
                for await frame in merged {
                    try await writer.write(ByteBuffer(string: frame))
                }
                try await writer.finish(nil)
            } onGracefulShutdown: {
                continuation.finish()
            }
        }
        return Response(status: .ok, headers: headers, body: body)
    }

    static func frame(_ event: ControlEvent) -> String {
        "event: \(event.name)\ndata: \(event.jsonPayload)\n\n"
    }

    private static func status(_ status: ControlStatus) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return body(.ok, try encoder.encode(status))
    }

    static func json(_ status: HTTPResponse.Status, _ object: [String: String]) -> Response {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return body(status, data)
    }

    private static func body(_ status: HTTPResponse.Status, _ data: Data) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        headers[.cacheControl] = "no-store"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}

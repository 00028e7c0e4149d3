import ClientFoundation
import ClientShim
import ClientUpdater
import Foundation
import Hummingbird
import Logging
import LoopbackHTTP
import NIOCore
import ServiceLifecycle

/// The `/__clientctl/` endpoints the shim's `serve` backend calls (docs/serving.md#control-endpoints).
///
/// POSTs must carry `X-Clientctl-Shim: 1`: a page from another origin cannot send that
/// header without a CORS preflight, which this server never grants.
struct ControlResponder: Sendable {
    let heartbeat: Duration
    /// The clock an event stream's heartbeat sleeps on (the engine's under `serve`).
    let clock: MonotonicClock
    let logger: Logger
    /// Open event streams, capped.
    let streams: StreamGate

    /// Answers `endpoint` once ``ControlGateMiddleware`` let the request through (known
    /// endpoint, right method, shim header, an attached handler).
    func respond(
        _ endpoint: ControlEndpoint, request: Request, handler: (any ControlHandler)?,
        connectionClosed: EventLoopFuture<Void>? = nil
    ) async -> Response {
        guard let handler else {
            return Self.json(.serviceUnavailable, ["error": "no update agent is attached to this server"])
        }
        var version: String?
        var body = PageVersion.Body()
        // `problems` reads a body of its own (``ProblemsBody``).
        if endpoint.httpMethod == .post, endpoint != .problems {
            switch await PageVersion.readBody(request) {
            case .success(let read):
                body = read
                version = read.version
            case .failure(let refusal): return Self.json(.badRequest, ["error": "\(endpoint.path): \(refusal.message)"])
            }
        }
        do {
            switch endpoint {
            case .status: return try Self.status(await handler.status())
            case .startupComplete: return try Self.status(await handler.startupDidComplete(version: version))
            case .check: return try Self.status(await handler.checkForUpdates(version: version))
            case .switchToPending: return try Self.status(await handler.switchToPendingVersion(version: version))
            case .events: return events(handler: handler, connectionClosed: connectionClosed)
            case .activity:
                await handler.userActivity(version: version)
                return Self.json(.ok, [:])
            case .hold, .holdDownloads:
                guard let lease = body.lease, let seconds = body.seconds else {
                    return Self.json(.badRequest, ["error": "\(endpoint.path): the body needs \"lease\" and \"seconds\""])
                }
                let until =
                    endpoint == .hold
                    ? try await handler.holdUpdate(lease: lease, for: .seconds(clamping: seconds), version: version)
                    : try await handler.holdDownloads(lease: lease, for: .seconds(clamping: seconds), version: version)
                return Self.json(.ok, ["until": Date.ISO8601FormatStyle().format(until)])
            case .channel, .setChannel:
                return await channel(endpoint, body: body, version: version, handler: handler)
            case .problems:
                return await problems(request, handler: handler)
            }
        } catch {
            let message = (error as? any ClientctlError)?.message ?? "\(error)"
            logger.warning("control \(endpoint.rawValue) failed: \(message)")
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
        let (heartbeat, clock) = (self.heartbeat, self.clock)
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
                    try await clock.sleep(for: heartbeat)
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

    /// `GET channel` and `POST set-channel` (docs/serving.md#control-endpoints): the choice,
    /// or a refusal that names why — 400 a name off the rule, 403 a channel the device's
    /// trust root does not let it choose, 409 a root without channels, 503 a busy root.
    private func channel(_ endpoint: ControlEndpoint, body: PageVersion.Body, version: String?, handler: any ControlHandler) async
        -> Response
    {
        do {
            let choice: ControlChannels
            if endpoint == .setChannel {
                guard let name = body.channel else {
                    return Self.json(.badRequest, ["error": "\(endpoint.path): the body needs \"channel\""])
                }
                choice = try await handler.setChannel(name, version: version)
            } else {
                choice = try await handler.channels()
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            return Self.body(.ok, try encoder.encode(choice))
        } catch {
            let message = (error as? any ClientctlError)?.message ?? "\(error)"
            logger.warning("control \(endpoint.rawValue) refused: \(message)")
            let status: HTTPResponse.Status =
                switch (error as? any ClientctlError)?.kind {
                case .usage: .badRequest
                case .notPermitted: .forbidden
                case .config: .conflict
                case .tempFail: .serviceUnavailable
                default: .internalServerError
                }
            return Self.json(status, ["error": message])
        }
    }

    /// `POST problems` (docs/serving.md#control-endpoints): the page's errors and messages
    /// are counted, then each app kind on its own, so one refused kind (a `usage` error of
    /// the agent: 400 naming why, and which kinds in `refused`) costs no other its count.
    private func problems(_ request: Request, handler: any ControlHandler) async -> Response {
        let path = ControlEndpoint.problems.path
        let body: ProblemsBody
        switch await ProblemsBody.read(request) {
        case .success(let read): body = read
        case .failure(let refusal): return Self.json(.badRequest, ["error": "\(path): \(refusal.message)"])
        }
        do {
            if body.errors > 0 || !body.messages.isEmpty {
                try await handler.pageProblems(errors: body.errors, messages: body.messages, appKinds: [], version: body.version)
            }
            var refused: [String: String] = [:]
            var first: String?
            for kind in body.app {
                do {
                    try await handler.pageProblems(errors: 0, messages: [], appKinds: [kind], version: body.version)
                } catch let error as any ClientctlError where error.kind == .usage {
                    refused[kind] = error.message
                    if first == nil { first = error.message }
                }
            }
            guard let first else { return Self.json(.ok, [:]) }
            let data = (try? JSONSerialization.data(withJSONObject: ["error": first, "refused": refused], options: [.sortedKeys])) ?? Data()
            return Self.body(.badRequest, data)
        } catch {
            let message = (error as? any ClientctlError)?.message ?? "\(error)"
            logger.warning("control problems failed: \(message)")
            return Self.json(.internalServerError, ["error": message])
        }
    }

    static func frame(_ event: ControlEvent) -> String {
        "event: \(event.name)\ndata: \(event.jsonPayload)\n\n"
    }

    private static func status(_ status: ControlStatus) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return body(.ok, try encoder.encode(status))
    }

    static func json(_ status: HTTPResponse.Status, _ object: [String: String]) -> Response { JSONResponse.make(status, object) }

    private static func body(_ status: HTTPResponse.Status, _ data: Data) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        headers[.cacheControl] = "no-store"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}

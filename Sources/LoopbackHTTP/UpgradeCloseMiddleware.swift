import Hummingbird

/// First on every request: a request that asks to switch protocols (`Upgrade:`, a
/// WebSocket handshake) is answered as any other — nothing here speaks WebSocket — with
/// `Connection: close`, so that its client does not send another request on it.
///
/// SwiftNIO's HTTP/1 decoder reads nothing more on a connection once a request on it
/// asked to upgrade, so a next request there would wait, unanswered, until the header
/// timeout; and WebKitGTK's network stack (libsoup) puts the connection of a refused
/// WebSocket handshake back in its pool: a page's `new WebSocket(…)` stalled its next
/// requests (a service worker's registration never fetched its script).
package struct UpgradeCloseMiddleware<Context: RequestContext>: RouterMiddleware {
    package init() {}

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.headers[.upgrade] != nil else { return try await next(request, context) }
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            response = try error.response(from: request, context: context)
        }
        response.headers[.connection] = "close"
        return response
    }
}

import ClientShim
import ClientUpdater
import Hummingbird
import LoopbackHTTP
import ServingCore

/// The router of `serve`: middleware for what every request must pass, then one route per
/// control endpoint and one catch-all file route.
///
/// Order: ``UpgradeCloseMiddleware`` (no connection outlives a request to upgrade) →
/// ``HostCheckMiddleware`` (DNS rebinding) → ``ControlGateMiddleware`` (endpoint
/// table, method, shim header, attached agent) → ``FileMethodMiddleware`` (files are GET
/// and HEAD only) → the routes. The middleware also sees requests no route matches, so a
/// wrong method always gets 405 with `Allow`, never the router's 404.
enum ClientRouter {
    static func make(slot: ControlSlot, files: FileRoute, control: ControlResponder, hostGuard: HostGuard) -> Router<ServeRequestContext> {
        let router = Router(context: ServeRequestContext.self)
        router.add(middleware: UpgradeCloseMiddleware())
        router.add(middleware: HostCheckMiddleware(hostGuard: hostGuard))
        router.add(middleware: ControlGateMiddleware(control: slot))
        router.add(middleware: FileMethodMiddleware())
        for endpoint in ControlEndpoint.allCases {
            let methods: [HTTPRequest.Method] = endpoint.httpMethod == .get ? [.get, .head] : [endpoint.httpMethod]
            for method in methods {
                router.on(RouterPath(endpoint.path), method: method) { request, context in
                    await control.respond(endpoint, request: request, handler: slot.handler, connectionClosed: context.connectionClosed)
                }
            }
        }
        for path in ["/", "/**"] {
            for method in [HTTPRequest.Method.get, .head] {
                router.on(RouterPath(path), method: method) { request, context in
                    // A top-level navigation to the start page (where the shim is, so the
                    // new version's trial can be acknowledged): a staged version waiting
                    // for one takes over first.
                    if method == .get, request.headers[HeaderName.secFetchMode] == "navigate",
                        request.headers[HeaderName.secFetchDest] == "document", let handler = slot.handler,
                        files.core.answersWithStartPage(request.uri.path)
                    {
                        await handler.pageNavigates()
                    }
                    return try await files.respond(to: request, context: context)
                }
            }
        }
        return router
    }
}

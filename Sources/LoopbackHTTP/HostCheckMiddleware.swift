import Hummingbird

/// First on every request: the ``HostGuard`` DNS-rebinding check (421 for another Host,
/// 403 for a POST from another origin).
package struct HostCheckMiddleware: RouterMiddleware {
    package typealias Context = ServeRequestContext
    let hostGuard: HostGuard

    package init(hostGuard: HostGuard) { self.hostGuard = hostGuard }

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let refusal = hostGuard.refusal(for: request) { throw Refusal(refusal) }
        return try await next(request, context)
    }
}

import Hummingbird

/// First on every request: the ``HostGuard`` DNS-rebinding check (421 for another Host,
/// 403 for a POST from another origin).
struct HostCheckMiddleware: RouterMiddleware {
    typealias Context = ServeRequestContext
    let hostGuard: HostGuard

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let refusal = hostGuard.refusal(for: request) { throw Refusal(refusal) }
        return try await next(request, context)
    }
}

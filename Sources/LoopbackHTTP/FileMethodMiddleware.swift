import ClientShim
import Hummingbird

/// Files are read-only: outside `/__clientctl/` any method but GET and HEAD gets 405 with
/// `Allow: GET, HEAD` (whatever the path, also for methods no route names).
package struct FileMethodMiddleware: RouterMiddleware {
    package typealias Context = ServeRequestContext

    package init() {}

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.uri.path.hasPrefix(ControlEndpoint.prefix) || request.method == .get || request.method == .head else {
            var response = FileRoute.plain(.methodNotAllowed, "only GET and HEAD are served\n")
            response.headers[.allow] = "GET, HEAD"
            throw Refusal(response)
        }
        return try await next(request, context)
    }
}

import ClientShim
import Hummingbird
import LoopbackHTTP

/// On every request of the shell's loopback origin, after the ``HostGuard`` check:
/// the ``LaunchSecret``. `GET /?clientctl-launch=TOKEN` with a token the shell minted is
/// answered `303` to `/` with the cookie; any other request without the cookie gets `403`
/// (a token used, expired or never minted too). Past it, `/__clientctl/` is `404`: the
/// shell's page bridge is its WebKit message handler, never HTTP.
struct LaunchSecretMiddleware: RouterMiddleware {
    typealias Context = ServeRequestContext
    let secret: LaunchSecret

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if request.uri.path == "/", request.method == .get || request.method == .head,
            let token = LaunchSecret.token(inQuery: request.uri.query)
        {
            guard secret.redeem(token) else {
                throw Refusal(FileRoute.plain(.forbidden, "this launch link was used or has expired\n"))
            }
            var response = Response(status: .seeOther)
            response.headers[.location] = "/"
            response.headers[.setCookie] = secret.setCookie
            response.headers[.cacheControl] = "no-store"
            return response
        }
        guard secret.admits(cookieHeaders: request.headers[values: .cookie]) else {
            throw Refusal(FileRoute.plain(.forbidden, "only the clientctl-shell window that opened this port is answered\n"))
        }
        if request.uri.path.hasPrefix(ControlEndpoint.prefix) {
            throw Refusal(FileRoute.plain(.notFound, "no control endpoints here: the shell's page bridge is its message handler\n"))
        }
        return try await next(request, context)
    }
}

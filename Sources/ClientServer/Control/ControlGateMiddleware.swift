import ClientShim
import ClientUpdater
import Hummingbird
import LoopbackHTTP

/// The checks every `/__clientctl/` request passes before its route: a known endpoint
/// (404), its method (405 with `Allow`; HEAD where GET is allowed), the shim header on
/// POSTs (403), and an attached update agent (503). Answers are JSON `{"error": …}`.
struct ControlGateMiddleware: RouterMiddleware {
    typealias Context = ServeRequestContext
    let control: ControlSlot

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        guard path.hasPrefix(ControlEndpoint.prefix) else { return try await next(request, context) }
        guard let endpoint = ControlEndpoint(rawValue: String(path.dropFirst(ControlEndpoint.prefix.count))) else {
            throw Refusal(ControlResponder.json(.notFound, ["error": "no control endpoint \(path)"]))
        }
        guard request.method == endpoint.httpMethod || (endpoint.httpMethod == .get && request.method == .head) else {
            var response = ControlResponder.json(.methodNotAllowed, ["error": "\(path) accepts \(endpoint.method) only"])
            response.headers[.allow] = endpoint.method
            throw Refusal(response)
        }
        if endpoint.httpMethod == .post, request.headers[ControlEndpoint.shimHeader] != "1" {
            throw Refusal(ControlResponder.json(.forbidden, ["error": "\(path) needs the X-Clientctl-Shim: 1 header"]))
        }
        guard control.handler != nil else {
            throw Refusal(ControlResponder.json(.serviceUnavailable, ["error": "no update agent is attached to this server"]))
        }
        return try await next(request, context)
    }
}

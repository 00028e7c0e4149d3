import HTTPTypes
import Hummingbird

/// Puts the console's security headers on every response, the login page and every refusal
/// included: a Content-Security-Policy that allows no script at all, no inline style, no
/// frame around the console and no form sent elsewhere; no sniffing, no cross-site
/// referrer, no cache.
struct SecurityHeaders<Context: RequestContext>: RouterMiddleware {
    /// The policy: nothing but the console's own stylesheet, `data:` images, and forms to itself.
    static var contentSecurityPolicy: String {
        "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as HTTPError {
            response = Reply.text(error.status, error.body ?? "\(error.status.code) \(error.status.reasonPhrase)")
        }
        Self.apply(&response.headers)
        return response
    }

    static func apply(_ headers: inout HTTPFields) {
        headers[.contentSecurityPolicy] = contentSecurityPolicy
        headers[.xContentTypeOptions] = "nosniff"
        headers[.referrerPolicy] = "same-origin"
        headers[.cacheControl] = "no-store"
        headers[.xFrameOptions] = "DENY"
    }
}

extension HTTPField.Name {
    // Names the HTTP types do not list. Both are valid tokens: the optional is never nil.
    static let referrerPolicy = Self("Referrer-Policy") ?? .cacheControl
    static let xFrameOptions = Self("X-Frame-Options") ?? .cacheControl
}

import Hummingbird

/// A request refused before any route answers it (wrong Host, wrong method, missing shim
/// header, …), thrown by the middleware and turned into its response by the router.
///
/// An `HTTPResponseError` like Hummingbird's `HTTPError`, but answering with the exact
/// bodies `serve` has always sent (`{"error": …}` JSON for `/__clientctl/`, one line of
/// text for files), which the shim and scripts read.
package struct Refusal: Error, HTTPResponseError {
    let prepared: Response

    package init(_ response: Response) { prepared = response }

    package var status: HTTPResponse.Status { prepared.status }

    package func response(from request: Request, context: some RequestContext) throws -> Response { prepared }
}

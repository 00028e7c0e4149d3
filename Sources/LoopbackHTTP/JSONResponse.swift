import Foundation
import Hummingbird
import NIOCore

/// A small JSON answer (`{"error": "…"}`): a listener's refusals (``HostGuard``) and
/// `serve`'s control endpoints write it the same way.
package enum JSONResponse {
    /// `object` as JSON (sorted keys), `Content-Type: application/json`, `Cache-Control: no-store`.
    package static func make(_ status: HTTPResponse.Status, _ object: [String: String]) -> Response {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        headers[.cacheControl] = "no-store"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}

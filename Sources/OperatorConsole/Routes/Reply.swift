import HTTPTypes
import Hummingbird
import NIOCore

/// The console's responses: an HTML page, a one-line text refusal, a redirect.
enum Reply {
    static func html(_ page: String, status: HTTPResponse.Status = .ok, headers more: HTTPFields = [:]) -> Response {
        var headers = more
        headers[.contentType] = "text/html; charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: page)))
    }

    /// A refusal that is not a page: its status and one line naming why.
    static func text(_ status: HTTPResponse.Status, _ line: String, headers more: HTTPFields = [:]) -> Response {
        var headers = more
        headers[.contentType] = "text/plain; charset=utf-8"
        let flat = line.replacingOccurrences(of: "\n", with: " ")
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: flat + "\n")))
    }

    /// `303 See Other` to `path` (a path of the console's own, never one from the request).
    static func seeOther(_ path: String, headers more: HTTPFields = [:]) -> Response {
        var headers = more
        headers[.location] = path
        return Response(status: .seeOther, headers: headers)
    }

    static func css(_ text: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/css; charset=utf-8"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}

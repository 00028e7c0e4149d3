import Foundation
import HTTPTypes
import Hummingbird

/// A response that refuses: a 4xx or 503 whose body is one line, `{"error": "…"}`, naming why.
enum Refusal {
    static func response(_ status: HTTPResponse.Status, _ message: String, retryAfter: Int? = nil) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        if status == .unauthorized { headers[.wwwAuthenticate] = "Bearer realm=\"clientctl collect\"" }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: line(message) + "\n")))
    }

    /// `{"error":"…"}` with the message on one line.
    static func line(_ message: String) -> String {
        let flat = message.replacingOccurrences(of: "\n", with: " ")
        let data = (try? JSONEncoder().encode(["error": flat])) ?? Data("{\"error\":\"refused\"}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    static func json(_ data: Data, status: HTTPResponse.Status = .ok) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    static func text(_ text: String, contentType: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = contentType
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}

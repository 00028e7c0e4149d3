import Foundation
import Hummingbird
import NIOCore
import ServingCore

/// The HTTP front end of the serving core: every GET and HEAD outside `/__clientctl/`
/// becomes a ``FileRequest``, and the core's ``FileAnswer`` becomes a Hummingbird response
/// (a file body streamed in chunks read off the cooperative pool).
package struct FileRoute: Sendable {
    package let core: ServingCore
    /// Called with the version of every page answered, before its response is sent (the
    /// native shell's loopback origin records the document's version; `serve` has none).
    var onPage: (@Sendable (String) async -> Void)? = nil
    /// When set, a file body waits for one of these slots before its file is opened, and
    /// gives it back when sent or dropped (the native shell's loopback origin: a bound on
    /// the files open and the bytes in flight, whatever the page asks for at once).
    var slots: StreamSlots? = nil

    package init(core: ServingCore, onPage: (@Sendable (String) async -> Void)? = nil, slots: StreamSlots? = nil) {
        self.core = core
        self.onPage = onPage
        self.slots = slots
    }

    package func respond(to request: Request, context: ServeRequestContext) async throws -> Response {
        let fileRequest = FileRequest(
            path: request.uri.path, query: request.uri.query, isHead: request.method == .head,
            ifNoneMatch: request.headers[.ifNoneMatch], range: request.headers[.range], ifRange: request.headers[.ifRange])
        let answer = try await core.answer(fileRequest)
        if let onPage, answer.isPage, let version = answer.version { await onPage(version) }
        return try await Self.response(for: answer, slots: slots)
    }

    static func response(for answer: FileAnswer, slots: StreamSlots? = nil) async throws -> Response {
        var headers = HTTPFields()
        headers.reserveCapacity(answer.headers.count)
        for (name, value) in answer.headers {
            guard let field = HTTPFields.Element.Name(name) else { continue }
            // A body in memory carries its own length.
            if case .bytes = answer.body, field == .contentLength { continue }
            headers.append(HTTPFields.Element(name: field, value: value))
        }
        let status = HTTPResponse.Status(code: answer.status)
        switch answer.body {
        case .none:
            return Response(status: status, headers: headers, body: ResponseBody())
        case .bytes(let buffer):
            return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: buffer))
        case .file(let path, let size, let bytes):
            // The slot is given back when the stream closes its file: once the body is
            // sent, failed or dropped unwritten (its connection gone).
            await slots?.acquire()
            var release: (@Sendable () -> Void)?
            if let slots { release = { slots.release() } }
            let stream: ResponseBodyStream
            do {
                stream = try await SafeFileReader.body(path, expectedSize: size, range: bytes, onClose: release)
            } catch {
                release?()
                throw error
            }
            let length = Int(bytes.upperBound - bytes.lowerBound + 1)
            let body = ResponseBody(contentLength: length) { writer in
                var offset = bytes.lowerBound
                while let chunk = try await stream.chunk(at: offset) {
                    offset += Int64(chunk.readableBytes)
                    try await writer.write(chunk)
                }
                try await writer.finish(nil)
            }
            return Response(status: status, headers: headers, body: body)
        }
    }

    static func notFound(_ path: String) -> Response {
        plain(.notFound, "not found\n")
    }

    package static func plain(_ status: HTTPResponse.Status, _ text: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; charset=utf-8"
        headers[.cacheControl] = "no-cache"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }
}

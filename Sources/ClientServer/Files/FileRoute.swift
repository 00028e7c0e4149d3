import ClientUpdater
import Foundation
import Hummingbird
import Logging

/// The route of every GET and HEAD outside `/__clientctl/`: the current version's files,
/// then the `www` files of a Meteor shell, then index.html for client-side routes.
struct FileRoute: Sendable {
    let pointer: CurrentVersion
    let www: [String: ServedFile]
    let files: FileResponder

    func respond(to request: Request, context: ServeRequestContext) async throws -> Response {
        let raw = request.uri.path
        // One version for the whole request, even if a switch happens meanwhile.
        guard let version = pointer.version else {
            return Self.plain(.serviceUnavailable, "no client version is being served\n")
        }
        guard let path = PathRules.decodedPath(raw) else { return Self.notFound(raw) }
        let hasQuery = !(request.uri.query ?? "").isEmpty
        if path == "/favicon.ico" { return Self.notFound(path) }
        if path == "/" || path == "/index.html", let index = version.index {
            return try await files.respond(index, version: version, request: request, allowImmutable: false)
        }
        if let file = version.file(at: path) {
            return try await files.respond(
                file, version: version, request: request,
                allowImmutable: hasQuery || HashedName.containsSHA1Hex(path))
        }
        let underApplication = path == "/application" || path.hasPrefix("/application/")
        if !underApplication, let file = www[path], file.answers(path) {
            return try await files.respond(file, version: version, request: request, allowImmutable: false)
        }
        // Client-side routing: extension-less paths (and, as in the Meteor plugin,
        // anything under /application when a www folder is served) get index.html.
        let routeLike = PathRules.fileExtension(path) == nil || (underApplication && !www.isEmpty)
        guard routeLike, let index = version.index else { return Self.notFound(path) }
        return try await files.respond(index, version: version, request: request, allowImmutable: false)
    }

    static func notFound(_ path: String) -> Response {
        plain(.notFound, "not found\n")
    }

    static func plain(_ status: HTTPResponse.Status, _ text: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; charset=utf-8"
        headers[.cacheControl] = "no-cache"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }
}

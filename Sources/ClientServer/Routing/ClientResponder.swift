import ClientUpdater
import Foundation
import Hummingbird
import Logging

/// Routes every request: control endpoints, then the current version's files, then the
/// `www` files of a Meteor shell, then index.html for client-side routes.
struct ClientResponder: HTTPResponder {
    typealias Context = ServeRequestContext
    let pointer: CurrentVersion
    let www: [String: ServedFile]
    let files: FileResponder
    let control: ControlResponder
    let hostGuard: HostGuard

    func respond(to request: Request, context: ServeRequestContext) async throws -> Response {
        if let refusal = hostGuard.refusal(for: request) { return refusal }
        let raw = request.uri.path
        if raw.hasPrefix(ControlResponder.prefix) {
            return await control.respond(path: raw, request: request, handler: pointer.handler, connectionClosed: context.connectionClosed)
        }
        guard request.method == .get || request.method == .head else {
            var response = Self.plain(.methodNotAllowed, "only GET and HEAD are served\n")
            response.headers[.allow] = "GET, HEAD"
            return response
        }
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

/// The pointer to the version being served and the attached control handler; reading
/// and flipping it are single lock-protected reference loads and stores.
final class CurrentVersion: @unchecked Sendable {
    // Both fields are guarded by `lock`; they hold immutable `Sendable` references.
    private let lock = NSLock()
    private var _version: ServedVersion?
    private var _handler: (any ControlHandler)?

    var version: ServedVersion? {
        get { lock.withLock { _version } }
        set { lock.withLock { _version = newValue } }
    }

    var handler: (any ControlHandler)? {
        get { lock.withLock { _handler } }
        set { lock.withLock { _handler = newValue } }
    }
}

import ClientFoundation
import ClientUpdater
import Foundation
import Synchronization

/// A stand-in for a Meteor server's `/__cordova/` endpoints, behaving like the original
/// plugin's `WebAppMockRemoteServer`: it serves one folder of `downloadable_versions/`
/// (files laid out by URL path), answers `/__cordova/manifest.json` with the folder's
/// `manifest.json`, sets `ETag: "<sha1 of the bytes>"`, answers unknown paths with the
/// folder's index.html unless the query holds `meteor_dont_serve_index` (then 404), and
/// records every request. With ``Style/webapp`` it answers like a real Meteor server
/// instead (see `MeteorMockServer+WebApp.swift`).
public final class MeteorMockServer: Sendable {
    /// Whose behaviour the mock follows.
    public enum Style: Sendable {
        /// The plugin's test mock: `ETag: "<sha1 of the bytes>"`, files by URL path.
        case pluginMock
        /// packages/webapp/webapp_server.js: static files from the manifest, `ETag:
        /// "<manifest hash>"`, weak ETags for source maps, boilerplate index.html.
        case webapp
    }
    /// Whose behaviour the mock follows.
    public let style: Style
    private let versionsDirectory: String
    private struct State {
        var versionName: String?
        var log: [String] = []
        var overrides: [String: MockResponse] = [:]
        var etags = true
    }
    private let state = Mutex(State())

    /// One answer.
    public struct MockResponse: Sendable {
        public var status: Int
        public var headers: [String: String]
        public var body: Data
        public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
            self.status = status
            self.headers = headers
            self.body = body
        }
    }

    /// - Parameter versionsDirectory: a folder of version folders (`downloadable_versions`).
    public init(versionsDirectory: String, style: Style = .pluginMock) {
        self.versionsDirectory = versionsDirectory
        self.style = style
    }

    /// Serves `downloadable_versions/<name>` from now on.
    public func serve(_ name: String) {
        state.withLock { $0.versionName = name }
    }

    /// Whether answers carry `ETag: "<sha1>"` (default true; false = a server without ETags).
    public func sendETags(_ on: Bool) {
        state.withLock { $0.etags = on }
    }

    /// Replaces the answer for one path (`/__cordova/x`), e.g. to break a file.
    public func override(_ path: String, with response: MockResponse?) {
        state.withLock { $0.overrides[path] = response }
    }

    /// Every request path (without query) so far, in arrival order.
    public var requestedPaths: [String] { state.withLock { $0.log } }
    /// The requested paths as a set (the original suite compares sets).
    public var requestedPathSet: Set<String> { Set(requestedPaths) }
    /// Forgets the recorded requests.
    public func clearRequests() { state.withLock { $0.log.removeAll() } }

    /// Answers a request for `path` with `query` (without `?`), recording it.
    public func respond(path: String, query: String?) -> MockResponse {
        let (name, override, etags) = state.withLock { state in
            state.log.append(path)
            return (state.versionName, state.overrides[path], state.etags)
        }
        if let override { return override }
        var response =
            style == .webapp
            ? name.map { Self.webappAnswer(folder: versionsDirectory + "/" + $0, path: path, query: query) } ?? MockResponse(status: 404)
            : answer(path: path, query: query, name: name)
        if !etags { response.headers["etag"] = nil }
        return response
    }

    private func answer(path: String, query: String?, name: String?) -> MockResponse {
        guard let name, path.hasPrefix("/__cordova/") else { return MockResponse(status: 404) }
        let folder = versionsDirectory + "/" + name
        let relative = String(path.dropFirst("/__cordova/".count)).removingPercentEncoding ?? ""
        if !relative.isEmpty, !relative.split(separator: "/").contains(".."), let data = Self.regularFile(folder + "/" + relative) {
            return Self.ok(data, path: relative)
        }
        if (query ?? "").contains("meteor_dont_serve_index") { return MockResponse(status: 404) }
        guard let index = Self.regularFile(folder + "/index.html") else { return MockResponse(status: 404) }
        return Self.ok(index, path: "index.html")
    }

    private static func regularFile(_ path: String) -> Data? {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else { return nil }
        return FileManager.default.contents(atPath: path)
    }

    private static func ok(_ data: Data, path: String) -> MockResponse {
        let type = path.hasSuffix(".json") ? "application/json" : path.hasSuffix(".html") ? "text/html" : "application/octet-stream"
        return MockResponse(status: 200, headers: ["etag": "\"\(Digest.hex(.sha1, of: data))\"", "content-type": type], body: data)
    }
}

/// A ``Transport`` that hands requests to a ``MeteorMockServer`` in-process, with
/// scripted connection failures (e.g. "connection refused" before any response).
public final class MeteorMockTransport: Transport, Sendable {
    public let server: MeteorMockServer
    private let refuseNext = Mutex(0)
    private let bodyChunk = 4096

    public init(server: MeteorMockServer) { self.server = server }

    /// The next `count` requests fail like a refused connection (nothing is recorded).
    public func refuse(next count: Int) { refuseNext.withLock { $0 = count } }

    public func get(_ request: TransportRequest, sink: @Sendable (UnsafeRawBufferPointer) throws -> Void) async throws -> TransportResponse {
        let refused = refuseNext.withLock { refuseNext in
            guard refuseNext > 0 else { return false }
            refuseNext -= 1
            return true
        }
        if refused {
            throw UpdaterError(.network, "connection refused: \(request.url.absoluteString)")
        }
        try Task.checkCancellation()
        let components = URLComponents(url: request.url, resolvingAgainstBaseURL: true)
        let response = server.respond(path: components?.percentEncodedPath ?? request.url.path, query: components?.percentEncodedQuery)
        var offset = 0
        while offset < response.body.count {
            let end = min(offset + bodyChunk, response.body.count)
            try response.body[offset..<end].withUnsafeBytes { try sink($0) }
            offset = end
        }
        return TransportResponse(status: response.status, headers: response.headers)
    }
}

extension MeteorMockServer {
    /// A ``LoopbackHTTPServer`` handler answering like ``respond(path:query:)``, so the
    /// mock can be served over real HTTP on 127.0.0.1.
    /// - Parameter delivery: per request path, how to deliver the body (e.g. a slow drip).
    public func loopbackHandler(delivery: @escaping @Sendable (String) -> LoopbackResponse.Delivery? = { _ in nil }) -> LoopbackHTTPServer.Handler {
        { [self] request in
            let answer = respond(path: request.path, query: request.query)
            var response = LoopbackResponse(
                status: answer.status, headers: answer.headers.map { ($0.key, $0.value) },
                body: answer.body.isEmpty ? .empty : .data(answer.body))
            if answer.headers["transfer-encoding"] == "chunked" {
                // The boilerplate is streamed: chunked, no Content-Length.
                response.body = .data(Self.chunked(answer.body))
                response.omitContentLength = true
            }
            if let custom = delivery(request.path) { response.delivery = custom }
            return response
        }
    }
}

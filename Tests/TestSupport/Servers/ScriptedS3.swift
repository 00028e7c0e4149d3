import ClientFoundation
import ClientUpdater
import Foundation
import Synchronization

/// A stand-in for an S3 endpoint on 127.0.0.1 (a ``LoopbackHTTPServer``) for what a real S3
/// server never does: a listing that repeats its continuation token, a `404` to a `PUT`, a
/// 300 MiB `manifest.json`. The test's `script` answers the requests it cares about; every
/// other request gets the plain S3 behaviour below, path-style (`/BUCKET/KEY`):
///
/// - `HEAD`/`GET` of a key: `200` with `ETag` and `x-amz-meta-sha256` (and the bytes, when
///   the test stored them with ``store(_:_:)``), else `404 NoSuchKey`.
/// - `PUT`: honours `If-None-Match: *` and `If-Match` (`412`), records the key, its ETag and
///   the `x-amz-meta-sha256` it was sent with, answers `200`. The server does not keep
///   request bodies, so a key written by `PUT` is known by its SHA-256 only (a `GET` of it
///   answers `404`); tests that read bytes back store them first.
/// - `GET /BUCKET?list-type=2&prefix=P`: one page (`IsTruncated` false) of the keys below P.
/// - `DELETE`: removes the key, `204`.
///
/// Signatures are not checked. Call ``stop()`` when done.
public final class ScriptedS3: Sendable {
    /// Answers a request the test wants to script, or nil for the plain behaviour.
    public typealias Script = @Sendable (LoopbackRequest) -> LoopbackResponse?

    /// One stored object.
    public struct Object: Sendable {
        public var etag: String
        public var sha256: String?
        public var body: Data?
    }

    public static let bucket = "scripted"
    private struct Store {
        var objects: [String: Object] = [:]
        var serial = 0
    }
    private let contents = Mutex(Store())
    /// Set once in `init` (its handler holds `self` weakly).
    private let running = Mutex<LoopbackHTTPServer?>(nil)
    private var server: LoopbackHTTPServer? { running.withLock { $0 } }

    /// Starts the stand-in; `script` sees every request first.
    public init(script: @escaping Script = { _ in nil }) throws {
        let server = try LoopbackHTTPServer { [weak self] request in
            if let scripted = script(request) { return scripted }
            return self?.plain(request) ?? .status(503)
        }
        running.withLock { $0 = server }
    }

    /// `http://127.0.0.1:PORT`, for `--endpoint`.
    public var endpoint: String { server?.baseURL.absoluteString ?? "" }
    /// `s3://BUCKET/prefix`.
    public func url(_ prefix: String) -> String { "s3://\(Self.bucket)/\(prefix)" }
    /// Environment with credentials a push accepts (the stand-in checks none).
    public let environment = ["AWS_ACCESS_KEY_ID": "scripted", "AWS_SECRET_ACCESS_KEY": "scripted", "AWS_REGION": "us-east-1"]
    /// Every request so far, with what was sent back.
    public var log: [LoopbackExchange] { server?.log ?? [] }

    /// Stops the server and joins its threads: after it, ``log`` is final (bytes sent
    /// included, also for connections the client closed early).
    public func stop() { server?.stop() }

    /// Stores `body` as `key` (below the bucket), as a push would have.
    public func store(_ key: String, _ body: Data) {
        contents.withLock { store in
            store.serial += 1
            store.objects[key] = Object(etag: "\"e\(store.serial)\"", sha256: Digest.hex(.sha256, of: body), body: body)
        }
    }

    /// The object stored as `key`, if any.
    public func object(_ key: String) -> Object? { contents.withLock { $0.objects[key] } }
    /// Every stored key, sorted.
    public var keys: [String] { contents.withLock { $0.objects.keys.sorted() } }

    /// The key a request names (its path without `/BUCKET/`), or nil for the bucket itself.
    public static func key(of request: LoopbackRequest) -> String? {
        let path = request.path.dropFirst()  // "/"
        guard path.hasPrefix(bucket + "/") else { return nil }
        return String(path.dropFirst(bucket.count + 1))
    }

    /// A `ListObjectsV2` page of `keys` (`IsTruncated` and `NextContinuationToken` as given).
    public static func listPage(_ keys: [(key: String, size: Int)], truncated: Bool, next: String?) -> LoopbackResponse {
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ListBucketResult><Name>\(bucket)</Name><KeyCount>\(keys.count)</KeyCount>"
        xml += "<IsTruncated>\(truncated)</IsTruncated>"
        if let next { xml += "<NextContinuationToken>\(next)</NextContinuationToken>" }
        for (key, size) in keys {
            xml += "<Contents><Key>\(key)</Key><LastModified>2020-01-01T00:00:00.000Z</LastModified><Size>\(size)</Size></Contents>"
        }
        return .text(xml + "</ListBucketResult>", contentType: "application/xml")
    }

    /// An S3 error document with this status and code.
    public static func error(_ status: Int, _ code: String) -> LoopbackResponse {
        .text(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>\(code)</Code><Message>\(code)</Message></Error>", status: status,
            contentType: "application/xml")
    }

    /// The plain S3 behaviour of the type's documentation.
    func plain(_ request: LoopbackRequest) -> LoopbackResponse {
        guard let key = Self.key(of: request) else {
            let prefix = request.queryItems["prefix"] ?? ""
            let listed = contents.withLock { $0.objects.filter { $0.key.hasPrefix(prefix) }.map { ($0.key, $0.value.body?.count ?? 0) } }
            return Self.listPage(listed.sorted { $0.0 < $1.0 }, truncated: false, next: nil)
        }
        switch request.method {
        case "HEAD", "GET":
            guard let object = object(key), request.method == "HEAD" || object.body != nil else { return Self.error(404, "NoSuchKey") }
            var response = LoopbackResponse(status: 200, body: object.body.map { .data($0) } ?? .empty)
            response.setHeader("ETag", object.etag)
            response.setHeader("x-amz-meta-sha256", object.sha256)
            return response
        case "PUT":
            return contents.withLock { store in
                let held = store.objects[key]
                if request[header: "if-none-match"] == "*", held != nil { return Self.error(412, "PreconditionFailed") }
                if let match = request[header: "if-match"], match != held?.etag { return Self.error(412, "PreconditionFailed") }
                store.serial += 1
                store.objects[key] = Object(etag: "\"e\(store.serial)\"", sha256: request[header: "x-amz-meta-sha256"], body: nil)
                var response = LoopbackResponse(status: 200)
                response.setHeader("ETag", "\"e\(store.serial)\"")
                return response
            }
        case "DELETE":
            _ = contents.withLock { $0.objects.removeValue(forKey: key) }
            return LoopbackResponse(status: 204)
        default:
            return Self.error(405, "MethodNotAllowed")
        }
    }
}

import AsyncHTTPClient
import ClientFoundation
import Foundation
import NIOCore
import NIOHTTP1
import SignedManifest

/// The few S3 calls a push needs — GET, HEAD and a conditional PUT — signed with
/// ``SigV4`` and sent with AsyncHTTPClient. Connection failures and `5xx`/`429` answers are
/// retried a few times with backoff; every other answer is returned to the caller, which
/// decides what a `404` or a `412` means.
///
/// No body is read past its cap: a GET names the most its object may hold (a manifest
/// 64 KiB, an index 16 MiB, a listing page ``listPageLimit``), a body declared or streamed
/// past it is refused as soon as the cap is passed, and the answers only shown in
/// messages (errors, PUT and DELETE answers) are read up to ``messageLimit``.
package struct S3Client: Sendable {
    package let location: S3Location
    /// Attempts per request for transient failures (connection, `5xx`, `429`).
    package var attempts = 4
    /// Most pages a listing may take (``list(_:limit:)``): ListObjectsV2 returns up to 1,000
    /// keys a page, so 10,000 pages hold the 10 million objects a listing accepts.
    package var maxListPages = 10_000
    /// Largest body of one listing page: 1,000 keys of at most 1,024 bytes each, escaped.
    package static let listPageLimit = 8 * 1024 * 1024
    /// Largest body read of an answer that is only shown in a message (an error document,
    /// the answer to a PUT or DELETE): the rest is not read.
    package static let messageLimit = 64 * 1024
    /// Largest file list read back from the store (its signed size, at most this).
    package static let fileListLimit = 256 * 1024 * 1024

    package init(location: S3Location) { self.location = location }

    /// An answer: status, ETag, body and the SHA-256 a push stored as `x-amz-meta-sha256`.
    package struct Reply: Sendable {
        package var status: Int
        package var etag: String?
        package var body: Data
        package var sha256: String?
        /// The SHA-256 of the body, when it was hashed instead of kept (``digest(_:limit:)``).
        package var bodySHA256: String?
        /// False when the body went past the cap and was not read further.
        package var complete = true
    }

    /// `GET` of `key`, whose body may hold at most `limit` bytes (`what` names the object
    /// in the refusal, e.g. "a manifest").
    /// - Throws: `ArchivePublishingError` `.archiveLimit` when a successful answer declares or
    ///   sends more than `limit` bytes; reading stops at the cap.
    package func get(_ key: String, limit: Int, what: String) async throws -> Reply {
        let reply = try await read(key, limit: limit)
        guard reply.complete || !(200..<300).contains(reply.status) else {
            throw ArchivePublishingError(
                .archiveLimit, "\(name(key)) is over \(limit) bytes, the most \(what) may hold: refused, reading stopped at the limit")
        }
        return reply
    }

    /// `GET` of `key` reading at most `limit` bytes of its body: ``Reply/complete`` is false
    /// when there were more (the caller decides what that means).
    func read(_ key: String, limit: Int) async throws -> Reply {
        try await send(.GET, key: key, body: Data(), headers: [:], read: .keep(limit))
    }

    /// `HEAD` of `key`.
    package func head(_ key: String) async throws -> Reply {
        try await send(.HEAD, key: key, body: Data(), headers: [:], read: .keep(0))
    }

    /// `GET` of `key`, hashed as it arrives: ``Reply/bodySHA256`` is its SHA-256, or nil
    /// (with ``Reply/complete`` false) when it holds more than `limit` bytes.
    package func digest(_ key: String, limit: Int64) async throws -> Reply {
        try await send(.GET, key: key, body: Data(), headers: [:], read: .hash(limit))
    }

    /// `PUT` of `body` as `key` with extra headers (`If-None-Match`, `If-Match`,
    /// `Cache-Control`, `Content-Type`); the body's SHA-256 is stored as `x-amz-meta-sha256`.
    package func put(_ key: String, body: Data, headers: [String: String]) async throws -> Reply {
        var all = headers
        all["x-amz-meta-sha256"] = Digest.hex(.sha256, of: body)
        return try await send(.PUT, key: key, body: body, headers: all, read: .keep(Self.messageLimit))
    }

    /// `s3://bucket/prefix/key`, for messages.
    package func name(_ key: String) -> String {
        "s3://\(location.bucket)/" + (location.prefix.isEmpty ? key : location.prefix + "/" + key)
    }

    func send(_ method: HTTPMethod, key: String, body: Data, headers: [String: String], read: BodyRead) async throws -> Reply {
        guard let url = location.url(for: key), let host = url.host else {
            throw ArchivePublishingError(.invalidArgument, "cannot make a URL for \(name(key))")
        }
        var delay: UInt64 = 200_000_000
        for attempt in 1...max(1, attempts) {
            let last = attempt == max(1, attempts)
            do {
                let reply = try await once(method, url: url, host: host, body: body, headers: headers, read: read)
                if reply.status >= 500 || reply.status == 429, !last {
                    try await Task.sleep(nanoseconds: delay)
                    delay *= 2
                    continue
                }
                try check(reply, method: method, key: key)
                return reply
            } catch let error as ArchivePublishingError {
                throw error
            } catch {
                if last || Task.isCancelled {
                    let text = "\(error)"
                    let why = text.contains("Connection refused") ? "connection refused" : text
                    throw ArchivePublishingError(
                        .storageUnavailable, "\(method.rawValue) \(url.absoluteString): \(why) (after \(attempts) attempts)", underlying: error)
                }
                try await Task.sleep(nanoseconds: delay)
                delay *= 2
            }
        }
        throw ArchivePublishingError(.internalError, "\(method.rawValue) \(url.absoluteString): no attempt was made")
    }

    /// Answers no caller can act on become errors: refusals (`400`, `401`, `403`, `405`)
    /// and `5xx` after the retries. `404`, `409` and `412` are the caller's to interpret.
    func check(_ reply: Reply, method: HTTPMethod, key: String) throws {
        let what = "\(method.rawValue) \(name(key))"
        switch reply.status {
        case 404 where Self.errorText(reply.body)?.hasPrefix("NoSuchBucket") == true:
            throw ArchivePublishingError(
                .storageDenied, "\(what): bucket \(location.bucket) does not exist (HTTP 404 NoSuchBucket); check the URL and --endpoint")
        case 200..<300, 304, 404, 409, 412: return
        case 401, 403:
            throw ArchivePublishingError(
                .storageDenied,
                "\(what): access denied (\(Self.errorText(reply.body) ?? "HTTP \(reply.status)")); check the credentials and the bucket policy")
        case 500...:
            throw ArchivePublishingError(
                .storageUnavailable, "\(what): HTTP \(reply.status) after \(attempts) attempts (\(Self.errorText(reply.body) ?? "no detail"))")
        default:
            throw ArchivePublishingError(.storageDenied, "\(what): HTTP \(reply.status) (\(Self.errorText(reply.body) ?? "no detail"))")
        }
    }

    func once(_ method: HTTPMethod, url: URL, host: String, body: Data, headers: [String: String], read: BodyRead) async throws -> Reply {
        let payloadHash = Digest.hex(.sha256, of: body)
        var signed = headers.reduce(into: [String: String]()) { $0[$1.key.lowercased()] = $1.value }
        signed["host"] = url.port.map { "\(host):\($0)" } ?? host
        signed["x-amz-content-sha256"] = payloadHash
        let signer = SigV4(credentials: location.credentials, region: location.region)
        for (name, value) in signer.authorization(method: method.rawValue, url: url, headers: signed, payloadHash: payloadHash, date: Date()) {
            signed[name] = value
        }
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = method
        for (name, value) in signed.sorted(by: { $0.key < $1.key }) where name != "host" { request.headers.add(name: name, value: value) }
        if method == .PUT { request.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await Self.http.execute(request, timeout: .seconds(300))
        var reply = Reply(
            status: Int(response.status.code), etag: response.headers.first(name: "ETag"), body: Data(),
            sha256: response.headers.first(name: "x-amz-meta-sha256"))
        guard method != .HEAD else { return reply }
        // Only a successful GET's body is the caller's; any other is read for its message.
        let success = (200..<300).contains(reply.status)
        let plan: BodyRead = success ? read : .keep(Self.messageLimit)
        let declared = response.headers.first(name: "Content-Length").flatMap { Int64($0) }
        let received = try await Self.receive(response.body, declared: declared, read: plan)
        reply.body = received.data
        reply.bodySHA256 = received.sha256
        reply.complete = received.complete
        return reply
    }

    /// The process's client for pushes: a refused or failed connection is reported at once
    /// (our own attempts retry it) instead of being retried by the pool until the deadline.
    static let http: HTTPClient = {
        var configuration = HTTPClient.Configuration(timeout: .init(connect: .seconds(10), read: .seconds(60)))
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    /// `Code: Message` of an S3 XML error body, when there is one.
    static func errorText(_ body: Data) -> String? {
        guard let text = String(data: body.prefix(4096), encoding: .utf8) else { return nil }
        func element(_ name: String) -> String? {
            guard let start = text.range(of: "<\(name)>"), let end = text.range(of: "</\(name)>", range: start.upperBound..<text.endIndex) else {
                return nil
            }
            return String(text[start.upperBound..<end.lowerBound])
        }
        switch (element("Code"), element("Message")) {
        case (let code?, let message?): return "\(code): \(message)"
        case (let code?, nil): return code
        default: return nil
        }
    }
}

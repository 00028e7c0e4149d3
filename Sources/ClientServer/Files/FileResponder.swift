import Foundation
import Hummingbird
import Logging

/// Builds the response for one served file: conditional requests, byte ranges, caching
/// headers (docs/serving.md#headers, #caching, #ranges; the plugin's rules: docs/meteor.md#the-plugins-embedded-server).
struct FileResponder: Sendable {
    static let immutable = "public, max-age=31536000, immutable"
    static let noCache = "no-cache"
    let contentSecurityPolicy: String?
    let logger: Logger

    /// - Parameters:
    ///   - allowImmutable: the request may be cached forever (it carries a query or the
    ///     path a hash); only honoured for cacheable files.
    func respond(_ file: ServedFile, version: ServedVersion, request: Request, allowImmutable: Bool) async throws -> Response {
        do {
            return try await respondOrRefuse(file, version: version, request: request, allowImmutable: allowImmutable)
        } catch let refusal as SafeFileReader.Refusal {
            // A symlink, FIFO or swapped file planted in serving/: never followed, never waited on.
            logger.warning("\(refusal)")
            return FileRoute.notFound(file.servedPath)
        }
    }

    private func respondOrRefuse(_ file: ServedFile, version: ServedVersion, request: Request, allowImmutable: Bool) async throws -> Response {
        let loaded = try await file.load(cache: version.budget)
        var headers = HTTPFields()
        headers.reserveCapacity(8)
        headers[.contentType] = file.contentType
        headers[.cacheControl] = file.cacheable && (allowImmutable || file.hashedPath) ? Self.immutable : Self.noCache
        if let etag = loaded.etag { headers[.eTag] = etag }
        headers[.acceptRanges] = "bytes"
        if let map = file.sourceMap { headers[.xSourceMap] = map }
        if let csp = contentSecurityPolicy { headers[.contentSecurityPolicy] = csp }

        if let etag = loaded.etag, let inm = request.headers[.ifNoneMatch], Self.matches(inm, etag) {
            headers[.contentType] = nil
            return Response(status: .notModified, headers: headers)
        }
        var range: ClosedRange<Int64>?
        if let rangeHeader = request.headers[.range], Self.ifRangeAllows(request.headers[.ifRange], etag: loaded.etag) {
            switch ByteRange.parse(rangeHeader, size: file.size) {
            case .satisfiable(let r): range = r
            case .unsatisfiable:
                headers[.contentRange] = "bytes */\(file.size)"
                headers[.contentLength] = "0"
                return Response(status: .rangeNotSatisfiable, headers: headers)
            case .ignored: break
            }
        }
        let status: HTTPResponse.Status = range == nil ? .ok : .partialContent
        if let r = range { headers[.contentRange] = "bytes \(r.lowerBound)-\(r.upperBound)/\(file.size)" }
        // An empty file has no byte range at all (`0...(size - 1)` would trap).
        guard file.size > 0 else {
            headers[.contentLength] = "0"
            return Response(status: status, headers: headers, body: ResponseBody())
        }
        let bytes = range ?? 0...(file.size - 1)
        let length = bytes.upperBound - bytes.lowerBound + 1
        if request.method == .head {
            headers[.contentLength] = String(length)
            return Response(status: status, headers: headers, body: ResponseBody())
        }
        if let buffer = loaded.bytes {
            let slice = buffer.getSlice(at: buffer.readerIndex + Int(bytes.lowerBound), length: Int(length)) ?? buffer
            return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: slice))
        }
        let stream = try await SafeFileReader.body(file.path, expectedSize: file.size, range: bytes)
        headers[.contentLength] = String(length)
        let body = ResponseBody(contentLength: Int(length)) { writer in
            var offset = bytes.lowerBound
            while let chunk = try await stream.chunk(at: offset) {
                offset += Int64(chunk.readableBytes)
                try await writer.write(chunk)
            }
            try await writer.finish(nil)
        }
        return Response(status: status, headers: headers, body: body)
    }

    /// `If-None-Match` matching (weak comparison): `*`, or any listed tag equal to `etag`
    /// ignoring `W/` and quotes (the Meteor plugin sent unquoted tags). Works on bytes: a
    /// combining mark after a quote would join it into one `Character` (found by the
    /// request-head fuzz target).
    static func matches(_ header: String, _ etag: String) -> Bool {
        let quote = UInt8(ascii: "\"")
        var bare = Array(etag.utf8)[...]
        if bare.count >= 2, bare.first == quote, bare.last == quote { bare = bare.dropFirst().dropLast() }
        for candidate in Array(header.utf8).split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false) {
            var tag = candidate.drop { $0 == 0x20 || $0 == 0x09 }
            while let last = tag.last, last == 0x20 || last == 0x09 { tag = tag.dropLast() }
            if tag.elementsEqual([UInt8(ascii: "*")]) { return true }
            if tag.starts(with: [UInt8(ascii: "W"), UInt8(ascii: "/")]) { tag = tag.dropFirst(2) }
            if tag.count >= 2, tag.first == quote, tag.last == quote { tag = tag.dropFirst().dropLast() }
            if tag.elementsEqual(bare) { return true }
        }
        return false
    }

    /// A range applies when there is no `If-Range` or it names the current entity tag.
    static func ifRangeAllows(_ ifRange: String?, etag: String?) -> Bool {
        guard let ifRange else { return true }
        guard let etag else { return false }
        var value = Array(ifRange.utf8)[...]
        value = value.drop { $0 == 0x20 || $0 == 0x09 }
        while let last = value.last, last == 0x20 || last == 0x09 { value = value.dropLast() }
        return value.elementsEqual(etag.utf8)
    }
}

extension HTTPFields.Element.Name {
    static let xSourceMap = HTTPFields.Element.Name.token("X-SourceMap")
}

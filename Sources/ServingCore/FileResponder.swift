import Foundation
import Logging
import NIOCore

/// Builds the answer for one served file: conditional requests, byte ranges, caching
/// headers (docs/serving.md#headers, #caching, #ranges; the plugin's rules: docs/meteor.md#the-plugins-embedded-server).
struct FileResponder: Sendable {
    static let immutable = "public, max-age=31536000, immutable"
    static let noCache = "no-cache"
    let contentSecurityPolicy: String?
    let logger: Logger

    /// - Parameters:
    ///   - allowImmutable: the request may be cached forever (it carries a query or the
    ///     path a hash); only honoured for cacheable files.
    func answer(_ file: ServedFile, version: ServedVersion, request: FileRequest, allowImmutable: Bool) async throws -> FileAnswer {
        do {
            var answer = try await answerOrRefuse(file, version: version, request: request, allowImmutable: allowImmutable)
            answer.isPage = (answer.status == 200 || answer.status == 304) && file.contentType.hasPrefix("text/html")
            return answer
        } catch let refusal as SafeFileReader.Refusal {
            // A symlink, FIFO or swapped file planted in serving/: never followed, never waited on.
            logger.warning("\(refusal)")
            return ServingCore.notFound(version: version.id)
        }
    }

    private func answerOrRefuse(_ file: ServedFile, version: ServedVersion, request: FileRequest, allowImmutable: Bool) async throws -> FileAnswer {
        let loaded = try await file.load(cache: version.budget)
        var headers: [(name: String, value: String)] = []
        headers.reserveCapacity(9)
        headers.append(("Content-Type", file.contentType))
        headers.append(("Cache-Control", file.cacheable && (allowImmutable || file.hashedPath) ? Self.immutable : Self.noCache))
        if let etag = loaded.etag { headers.append(("ETag", etag)) }
        headers.append(("Accept-Ranges", "bytes"))
        if let map = file.sourceMap { headers.append(("X-SourceMap", map)) }
        if let csp = contentSecurityPolicy { headers.append(("Content-Security-Policy", csp)) }

        if let etag = loaded.etag, let inm = request.ifNoneMatch, Self.matches(inm, etag) {
            headers.removeAll { $0.name == "Content-Type" }
            return FileAnswer(status: 304, headers: headers, version: version.id)
        }
        var range: ClosedRange<Int64>?
        if let rangeHeader = request.range, Self.ifRangeAllows(request.ifRange, etag: loaded.etag) {
            switch ByteRange.parse(rangeHeader, size: file.size) {
            case .satisfiable(let r): range = r
            case .unsatisfiable:
                headers.append(("Content-Range", "bytes */\(file.size)"))
                headers.append(("Content-Length", "0"))
                return FileAnswer(status: 416, headers: headers, version: version.id)
            case .ignored: break
            }
        }
        let status = range == nil ? 200 : 206
        if let r = range { headers.append(("Content-Range", "bytes \(r.lowerBound)-\(r.upperBound)/\(file.size)")) }
        // An empty file has no byte range at all (`0...(size - 1)` would trap).
        guard file.size > 0 else {
            headers.append(("Content-Length", "0"))
            return FileAnswer(status: status, headers: headers, body: .bytes(ByteBuffer()), version: version.id)
        }
        let bytes = range ?? 0...(file.size - 1)
        let length = bytes.upperBound - bytes.lowerBound + 1
        headers.append(("Content-Length", String(length)))
        if request.isHead {
            return FileAnswer(status: status, headers: headers, version: version.id)
        }
        if let buffer = loaded.bytes {
            let slice = buffer.getSlice(at: buffer.readerIndex + Int(bytes.lowerBound), length: Int(length)) ?? buffer
            return FileAnswer(status: status, headers: headers, body: .bytes(slice), version: version.id)
        }
        return FileAnswer(status: status, headers: headers, body: .file(path: file.path, size: file.size, range: bytes), version: version.id)
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

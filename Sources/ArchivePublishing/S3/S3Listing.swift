import Foundation
import NIOHTTP1
import SignedManifest
import StrictJSON

/// Listing and deleting objects, for `push --keep` (docs/delta-updates.md#pruning):
/// `ListObjectsV2` pages and `DeleteObject`.
extension S3Client {
    /// One stored object.
    package struct Listed: Sendable, Equatable {
        /// The key below the client's prefix.
        package var key: String
        package var size: Int64
        package var lastModified: Date?
    }

    /// Every object whose key (below the prefix) starts with `prefix`, page by page
    /// (`list-type=2`, `continuation-token`), at most `limit` of them.
    ///
    /// A listing must end: S3 sends `NextContinuationToken` only with `IsTruncated` true and
    /// never the same token twice in one listing (AWS S3 API Reference, ListObjectsV2). A
    /// page truncated without a token, a token seen before, more than ``maxListPages`` pages
    /// or a page over ``listPageLimit`` bytes is refused at once.
    /// - Throws: `ArchivePublishingError` `.storageMisbehaved` for a listing that does not
    ///   end as S3's does, `.archiveLimit` past `limit` objects or a page over its cap.
    package func list(_ prefix: String, limit: Int = 10_000_000) async throws -> [Listed] {
        let full = location.prefix.isEmpty ? prefix : location.prefix + "/" + prefix
        let strip = location.prefix.isEmpty ? "" : location.prefix + "/"
        var found: [Listed] = []
        var token: String?
        var seen = Set<String>()
        var pages = 0
        repeat {
            pages += 1
            guard pages <= maxListPages else {
                throw ArchivePublishingError(
                    .storageMisbehaved, "listing \(name(prefix)) did not end within \(maxListPages) pages (the cap), \(found.count) objects so far")
            }
            var query = [("list-type", "2"), ("prefix", full)]
            if let token { query.append(("continuation-token", token)) }
            guard let url = location.bucketURL(query: query), let host = url.host else {
                throw ArchivePublishingError(.invalidArgument, "cannot make a listing URL for \(name(prefix))")
            }
            let reply = try await once(.GET, url: url, host: host, body: Data(), headers: [:], read: .keep(Self.listPageLimit))
            try check(reply, method: .GET, key: prefix)
            guard reply.status == 200 else {
                throw ArchivePublishingError(.storageDenied, "listing \(name(prefix)): HTTP \(reply.status)")
            }
            guard reply.complete else {
                throw ArchivePublishingError(
                    .archiveLimit,
                    "listing \(name(prefix)): page \(pages) is over \(Self.listPageLimit) bytes (the cap of one page), reading stopped there")
            }
            let page = ListPage(String(decoding: reply.body, as: UTF8.self))
            for item in page.items where item.key.hasPrefix(strip) {
                found.append(Listed(key: String(item.key.dropFirst(strip.count)), size: item.size, lastModified: item.lastModified))
            }
            guard found.count <= limit else { throw ArchivePublishingError(.archiveLimit, "\(name(prefix)) holds more than \(limit) objects") }
            token = nil
            if page.truncated {
                guard let next = page.nextToken, !next.isEmpty else {
                    throw ArchivePublishingError(
                        .storageMisbehaved, "listing \(name(prefix)): page \(pages) is truncated but names no NextContinuationToken")
                }
                guard seen.insert(next).inserted else {
                    throw ArchivePublishingError(
                        .storageMisbehaved,
                        "listing \(name(prefix)): page \(pages) repeats continuation token '\(next.prefix(40))' of an earlier page: the listing would never end"
                    )
                }
                token = next
            }
        } while token != nil
        return found
    }

    /// `DELETE` of `key`; a key already gone is not an error.
    package func delete(_ key: String) async throws {
        let reply = try await send(.DELETE, key: key, body: Data(), headers: [:], read: .keep(Self.messageLimit))
        guard (200..<300).contains(reply.status) || reply.status == 404 else {
            throw ArchivePublishingError(.storageDenied, "DELETE \(name(key)): HTTP \(reply.status)")
        }
    }
}

/// One page of a `ListObjectsV2` answer, read for the few elements a prune needs.
struct ListPage {
    var items: [(key: String, size: Int64, lastModified: Date?)] = []
    var truncated = false
    var nextToken: String?

    init(_ xml: String) {
        truncated = Self.element("IsTruncated", in: xml[...]) == "true"
        nextToken = Self.element("NextContinuationToken", in: xml[...])
        var rest = xml[...]
        while let start = rest.range(of: "<Contents>"), let end = rest[start.upperBound...].range(of: "</Contents>") {
            let body = rest[start.upperBound..<end.lowerBound]
            if let key = Self.element("Key", in: body) {
                let size = Self.element("Size", in: body).flatMap { Int64($0) } ?? 0
                let modified = Self.element("LastModified", in: body).flatMap(Self.date)
                items.append((key, size, modified))
            }
            rest = rest[end.upperBound...]
        }
    }

    static func element(_ name: String, in text: Substring) -> String? {
        guard let open = text.range(of: "<\(name)>"), let close = text[open.upperBound...].range(of: "</\(name)>") else { return nil }
        return unescape(String(text[open.upperBound..<close.lowerBound]))
    }

    static func unescape(_ s: String) -> String {
        s.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&apos;", with: "'")
            .replacingOccurrences(of: "&amp;", with: "&")
    }

    /// `2026-11-23T10:15:30.000Z` (S3 writes milliseconds; RFC 3339 allows them).
    static func date(_ text: String) -> Date? { RFC3339.parse(text) }
}

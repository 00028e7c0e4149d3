import ArchivePublishing
import Foundation
import SignedManifest
import TestSupport
import Testing

/// `S3Client.list` against listings a real S3 server never sends (``ScriptedS3``): per the
/// AWS S3 API Reference (ListObjectsV2), `NextContinuationToken` is present exactly when
/// `IsTruncated` is true and continues after the page's last key, so a listing of N keys
/// ends within N / 1,000 pages. Each stand-in ends its listing after 50 pages, so that a
/// client without the caps still returns.
@Suite struct S3ListingTests {
    func client(_ store: ScriptedS3, pages: Int) throws -> S3Client {
        var client = S3Client(
            location: try S3Location.resolve(store.url("notes"), endpoint: store.endpoint, region: nil, environment: store.environment))
        client.maxListPages = pages
        return client
    }

    func listings(_ store: ScriptedS3) -> Int { store.log.filter { ScriptedS3.key(of: $0.request) == nil }.count }

    @Test func aListingThatNeverEndsStopsAtThePageCap() async throws {
        let store = try ScriptedS3 { request in
            guard ScriptedS3.key(of: request) == nil else { return nil }
            let n = Int(request.queryItems["continuation-token"]?.dropFirst(6) ?? "0") ?? 0
            return ScriptedS3.listPage([("notes/stable/v1.0.\(n).tar.gz", 1)], truncated: n < 50, next: "token-\(n + 1)")
        }
        defer { store.stop() }
        let error = await #expect(throws: ArchivePublishingError.self) { try await client(store, pages: 5).list("stable/") }
        #expect(error?.code == .storageMisbehaved)
        #expect(error?.message == "listing s3://scripted/notes/stable/ did not end within 5 pages (the cap), 5 objects so far")
        #expect(listings(store) == 5)
        #expect(S3Client(location: try client(store, pages: 1).location).maxListPages == 10_000, "the documented default")
    }

    @Test func aTruncatedPageWithoutATokenIsRefused() async throws {
        let store = try ScriptedS3 { request in
            ScriptedS3.key(of: request) == nil ? ScriptedS3.listPage([("notes/stable/v1.0.0.tar.gz", 1)], truncated: true, next: nil) : nil
        }
        defer { store.stop() }
        let error = await #expect(throws: ArchivePublishingError.self) { try await client(store, pages: 100).list("stable/") }
        #expect(error?.message == "listing s3://scripted/notes/stable/: page 1 is truncated but names no NextContinuationToken")
        #expect(listings(store) == 1)
    }

    @Test func aCycleOfTokensIsRefusedAtTheFirstRepeat() async throws {
        let pages = RequestCounter()
        let store = try ScriptedS3 { request in
            guard ScriptedS3.key(of: request) == nil else { return nil }
            let next = request.queryItems["continuation-token"] == "a" ? "b" : "a"  // a, b, a, b, …
            return ScriptedS3.listPage([], truncated: pages.next() < 50, next: next)
        }
        defer { store.stop() }
        let error = await #expect(throws: ArchivePublishingError.self) { try await client(store, pages: 100).list("stable/") }
        #expect(error?.code == .storageMisbehaved)
        #expect(error?.message.contains("page 3 repeats continuation token 'a' of an earlier page") == true, "\(error?.message ?? "")")
        #expect(listings(store) == 3)
    }
}

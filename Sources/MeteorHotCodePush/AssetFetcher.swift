import ClientFoundation
import ClientUpdater
import Foundation
import Synchronization

/// Downloads Meteor manifests and assets through the shared ``Downloader`` settings
/// (transport, retry policy, sleeper).
///
/// A manifest `hash` is an opaque identifier, not a digest of the bytes: since Meteor
/// 1.4.2.1, `tools/isobuild/bundler.js` `File#hash()` is SHA-1 over the salt "2", the
/// file's input hash and its SRI (base64 SHA-512); `public/` files skip the SRI. The server
/// (`packages/webapp/webapp_server.js`) sends that value as `ETag: "<hash>"`. So an asset
/// is accepted when its quoted ETag equals the manifest hash (as the Cordova and Capacitor
/// plugins do); a quoted 40-hex ETag naming another hash is refused on the head, before any
/// body byte is written. Without an ETag naming the hash, only the legacy content SHA-1
/// (pre-1.4.2.1 servers, old fixtures) can vouch for the bytes; anything else is refused.
/// Every stored file's SHA-256 is returned for our own integrity record.
///
/// The manifest `size` is taken before the bundler may append a `//# sourceMappingURL=`
/// line, so it is a cap with ``sourceMapLineMargin`` added, not an equality.
struct AssetFetcher: Sendable {
    /// `<ROOT_URL>/__cordova/`.
    let baseURL: URL
    let downloader: Downloader
    /// Byte cap for an asset whose manifest gives no size.
    let maxAssetBytes: Int64

    /// Bytes allowed past a manifest `size`: room for the `//# sourceMappingURL=…` line a
    /// bundler may append after taking the size (bundler.js `addSourceMappingURL`, whose
    /// URL can carry the app's ROOT_URL). The global per-asset cap still applies.
    static let sourceMapLineMargin: Int64 = 4096

    /// What happened to one asset.
    enum Outcome: Sendable, Equatable {
        /// Verified and stored; `sha256` is the digest of the stored bytes.
        case stored(sha256: String)
        /// A source map the server does not have (404): tolerated.
        case missingSourceMap
    }

    /// The download URL of an asset: its URL path relative to the base URL, plus
    /// `meteor_dont_serve_index=true` except for index.html. Stays on the base origin.
    func downloadURL(for asset: AssetManifest.Asset) throws -> URL {
        if asset.isIndexPage { return baseURL }
        let relative = String(asset.urlPath.dropFirst()) + "?meteor_dont_serve_index=true"
        guard let url = URL(string: relative, relativeTo: baseURL)?.absoluteURL,
            url.scheme == baseURL.scheme, url.host == baseURL.host, url.port == baseURL.port,
            url.path.hasPrefix(baseURL.path)
        else {
            throw MeteorError(.unsafePath, "Asset url leaves \(baseURL.absoluteString): \(asset.urlPath)")
        }
        return url
    }

    /// Fetches the manifest into memory, at most `maxBytes`, with retries.
    func fetchManifest(maxBytes: Int) async throws -> Data {
        guard let url = URL(string: "manifest.json", relativeTo: baseURL)?.absoluteURL else {
            throw MeteorError(.invalidArgument, "cannot build the manifest URL from \(baseURL.absoluteString)")
        }
        switch try await downloader.fetchSmall(url, cap: maxBytes) {
        case .fetched(let data, _): return data
        case .notModified: throw MeteorError(.invalidManifest, "GET \(url.absoluteString): unexpected 304")
        }
    }

    /// Downloads `asset` into a new file at `temp` (created exclusively, fsynced) and
    /// verifies it. On any failure the temp file is removed.
    func fetch(_ asset: AssetManifest.Asset, version: String, to temp: String) async throws -> Outcome {
        let url = try downloadURL(for: asset)
        // Past the manifest size (plus an appended source-map line) the bytes cannot be the
        // ones the hash names; the 1 MiB floor lets a short error page through so its
        // status is what gets reported.
        let limit =
            asset.hash != nil
            ? min(max((asset.size ?? maxAssetBytes) + Self.sourceMapLineMargin, 1 << 20), maxAssetBytes) : maxAssetBytes
        // A status the head refuses is this module's `.httpStatus`, read by the retry loop
        // through `TransportFailing` (a 5xx is retried); a failed request is the
        // downloader's `UpdaterError` `.network`.
        return try await downloader.retrying(
            { _ in
                try await attemptFetch(asset, url: url, version: version, to: temp, limit: limit)
            },
            exhausted: { error, attempts in
                if let status = error.httpStatus {
                    return MeteorError(
                        .httpStatus,
                        "Non-success status code \(status) for asset: \(asset.urlPath) (version \(version), gave up after \(attempts) attempts)",
                        underlying: error)
                }
                return MeteorError(
                    .network, "Could not download asset \(asset.urlPath) of version \(version) after \(attempts) attempts: \(error.message)",
                    underlying: error)
            })
    }

    private struct MissingSourceMap: Error {}

    private func attemptFetch(
        _ asset: AssetManifest.Asset, url: URL, version: String, to temp: String,
        limit: Int64
    ) async throws -> Outcome {
        unlink(temp)
        let sink = try FileSink(path: temp, limit: limit)
        var keep = false
        defer {
            sink.close()
            if !keep { unlink(temp) }
        }
        // An asset is a download: it is read under the device's rate cap (the manifest is not).
        let request = TransportRequest(
            url: url, headers: downloader.headers, idleTimeout: downloader.idleTimeout, rateLimiter: downloader.rateLimiter)
        let vouched = ETagVerdict()
        do {
            _ = try await downloader.get(
                request,
                head: { head in
                    if head.status == 404, asset.isSourceMap { throw MissingSourceMap() }
                    guard (200..<300).contains(head.status) else {
                        throw MeteorError(
                            .httpStatus, "Non-success status code \(head.status) for asset: \(asset.urlPath) (version \(version))",
                            underlying: HTTPStatusFailure(status: head.status))
                    }
                    if let hash = asset.hash, let etag = head[header: "etag"], let tagged = Self.quotedSHA1(in: etag) {
                        guard tagged == hash else {
                            throw MeteorError(.hashMismatch, "Hash mismatch for asset: \(asset.urlPath) (version \(version), ETag \(tagged))")
                        }
                        vouched.set()
                    }
                }, sink: { try sink.write($0) })
        } catch is MissingSourceMap {
            return .missingSourceMap
        } catch  where sink.overflow {
            // More bytes than the manifest size: the content cannot be the one the hash names.
            if asset.hash != nil {
                throw MeteorError(.hashMismatch, "Hash mismatch for asset: \(asset.urlPath) (version \(version), more than \(limit) bytes)")
            }
            throw MeteorError(.tooLarge, "Asset \(asset.urlPath) of version \(version) is larger than \(limit) bytes")
        }
        let legacySHA1 = sink.digestHex()
        if let hash = asset.hash, !vouched.isSet, legacySHA1 != hash {
            throw MeteorError(
                .hashMismatch,
                "Hash mismatch for asset: \(asset.urlPath) (version \(version): no ETag names the manifest hash and the content SHA-1 is \(legacySHA1))"
            )
        }
        try sink.sync()
        keep = true
        return .stored(sha256: sink.sha256Hex())
    }

    /// Set from the response-head callback when the ETag names the manifest hash.
    private final class ETagVerdict: Sendable {
        // Written once by the head callback, read after `get` returned.
        private let value = Mutex(false)
        func set() { value.withLock { $0 = true } }
        var isSet: Bool { value.withLock { $0 } }
    }

    /// The 40-hex value of a quoted ETag (`"<hash>"`, also inside `W/"…"`), as the plugin reads it.
    static func quotedSHA1(in etag: String) -> String? {
        let bytes = Array(etag.utf8)
        guard bytes.count >= 42 else { return nil }
        for start in 0...(bytes.count - 42) where bytes[start] == 0x22 && bytes[start + 41] == 0x22 {
            let inner = bytes[(start + 1)...(start + 40)]
            if LowerHex.matches(inner) {
                return String(decoding: inner, as: UTF8.self)
            }
        }
        return nil
    }
}

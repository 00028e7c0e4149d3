import ClientUpdater
import Foundation

/// Downloads Meteor manifests and assets through the shared ``Downloader`` settings
/// (transport, retry policy, sleeper): status and quoted-SHA-1 `ETag` are judged on the
/// response head before any body byte is written, then the local SHA-1 of the bytes.
struct AssetFetcher: Sendable {
    /// `<ROOT_URL>/__cordova/`.
    let baseURL: URL
    let downloader: Downloader
    /// Byte cap for an asset whose manifest gives no size.
    let maxAssetBytes: Int64

    /// What happened to one asset.
    enum Outcome: Sendable, Equatable {
        case stored
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
        // Past the manifest size the bytes cannot match the hash; the 1 MiB floor lets a
        // short error page through so its status is what gets reported.
        let limit = asset.hash != nil ? min(max(asset.size ?? maxAssetBytes, 1 << 20), maxAssetBytes) : maxAssetBytes
        var attempt = 1
        while true {
            do {
                return try await attemptFetch(asset, url: url, version: version, to: temp, limit: limit)
            } catch let error as UpdaterError where error.isTransient && attempt < downloader.retry.maxAttempts {
                try await downloader.sleeper.sleep(seconds: downloader.retry.delay(beforeRetry: attempt, random: Double.random(in: 0..<1)))
                attempt += 1
            } catch let error as UpdaterError where error.isTransient && error.httpStatus != nil {
                throw MeteorError(.httpStatus, "Non-success status code \(error.httpStatus ?? 0) for asset: \(asset.urlPath) (version \(version), gave up after \(attempt) attempts)",
                                  underlying: error)
            } catch let error as UpdaterError where error.isTransient {
                throw MeteorError(.network, "Could not download asset \(asset.urlPath) of version \(version) after \(attempt) attempts: \(error.message)",
                                  underlying: error)
            } catch let error as UpdaterError where error.httpStatus != nil {
                throw MeteorError(.httpStatus, "Non-success status code \(error.httpStatus ?? 0) for asset: \(asset.urlPath) (version \(version))",
                                  underlying: error)
            }
        }
    }

    private struct MissingSourceMap: Error {}

    private func attemptFetch(_ asset: AssetManifest.Asset, url: URL, version: String, to temp: String,
                              limit: Int64) async throws -> Outcome {
        unlink(temp)
        let sink = try FileSink(path: temp, limit: limit)
        var keep = false
        defer {
            sink.close()
            if !keep { unlink(temp) }
        }
        let request = TransportRequest(url: url, headers: downloader.headers, idleTimeout: downloader.idleTimeout)
        do {
            _ = try await downloader.transport.get(request, head: { head in
                if head.status == 404, asset.isSourceMap { throw MissingSourceMap() }
                guard (200..<300).contains(head.status) else { throw UpdaterError.httpStatus(url, head.status) }
                if let hash = asset.hash, let etag = head[header: "etag"], let tagged = Self.quotedSHA1(in: etag), tagged != hash {
                    throw MeteorError(.hashMismatch, "Hash mismatch for asset: \(asset.urlPath) (version \(version), ETag \(tagged))")
                }
            }, sink: { try sink.write($0) })
        } catch is MissingSourceMap {
            return .missingSourceMap
        } catch where sink.overflow {
            // More bytes than the manifest size: the content cannot be the one the hash names.
            if asset.hash != nil {
                throw MeteorError(.hashMismatch, "Hash mismatch for asset: \(asset.urlPath) (version \(version), more than \(limit) bytes)")
            }
            throw MeteorError(.tooLarge, "Asset \(asset.urlPath) of version \(version) is larger than \(limit) bytes")
        }
        if let hash = asset.hash {
            let actual = sink.digestHex()
            guard actual == hash else {
                throw MeteorError(.hashMismatch, "Hash mismatch for asset: \(asset.urlPath) (version \(version), content SHA-1 \(actual))")
            }
        }
        try sink.sync()
        keep = true
        return .stored
    }

    /// The 40-hex value of a quoted ETag (`"<sha1>"`, also inside `W/"…"`), as the plugin reads it.
    static func quotedSHA1(in etag: String) -> String? {
        let bytes = Array(etag.utf8)
        guard bytes.count >= 42 else { return nil }
        for start in 0...(bytes.count - 42) where bytes[start] == 0x22 && bytes[start + 41] == 0x22 {
            let inner = bytes[(start + 1)...(start + 40)]
            if inner.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }) {
                return String(decoding: inner, as: UTF8.self)
            }
        }
        return nil
    }
}

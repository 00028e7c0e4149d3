import ClientUpdater
import Foundation

/// Downloads Meteor manifests and assets through a ``Transport`` with retries, caps and
/// verification: status, quoted-SHA-1 `ETag`, and the local SHA-1 of the bytes.
struct AssetFetcher: Sendable {
    /// `<ROOT_URL>/__cordova/`.
    let baseURL: URL
    let transport: any Transport
    let retry: RetryPolicy
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

    /// Fetches the manifest into memory, at most `maxBytes`.
    func fetchManifest(maxBytes: Int) async throws -> Data {
        guard let url = URL(string: "manifest.json", relativeTo: baseURL)?.absoluteURL else {
            throw MeteorError(.invalidArgument, "cannot build the manifest URL from \(baseURL.absoluteString)")
        }
        return try await withRetries(what: "asset manifest") {
            let buffer = MemorySink(limit: maxBytes)
            let response = try await transport.get(TransportRequest(url: url), sink: { try buffer.append($0) })
            if let tooLarge = buffer.overflow {
                throw MeteorError(.tooLarge, "Asset manifest is larger than the limit of \(tooLarge) bytes")
            }
            guard (200..<300).contains(response.status) else {
                throw StatusFailure(status: response.status, message: "Non-success status code \(response.status) for asset manifest: \(url.absoluteString)")
            }
            return buffer.data
        }
    }

    /// Downloads `asset` into a new file at `temp` (created exclusively, fsynced) and
    /// verifies it. On any failure the temp file is removed.
    func fetch(_ asset: AssetManifest.Asset, version: String, to temp: String) async throws -> Outcome {
        let url = try downloadURL(for: asset)
        // Past the manifest size the bytes cannot match the hash; the 1 MiB floor lets a
        // short error page through so its status is what gets reported.
        let limit = asset.hash != nil ? min(max(asset.size ?? maxAssetBytes, 1 << 20), maxAssetBytes) : maxAssetBytes
        return try await withRetries(what: "asset \(asset.urlPath)") {
            unlink(temp)
            let sink = try FileSink(path: temp, limit: limit)
            var keep = false
            defer {
                sink.close()
                if !keep { unlink(temp) }
            }
            let response: TransportResponse
            do {
                response = try await transport.get(TransportRequest(url: url), sink: { try sink.write($0) })
            } catch where sink.overflow {
                // More bytes than the manifest size: the content cannot be the one the hash names.
                if asset.hash != nil {
                    throw MeteorError(.hashMismatch, "Hash mismatch for asset: \(asset.urlPath) (version \(version), more than the manifest size of \(limit) bytes)")
                }
                throw MeteorError(.tooLarge, "Asset \(asset.urlPath) of version \(version) is larger than \(limit) bytes")
            }
            if response.status == 404, asset.isSourceMap { return .missingSourceMap }
            guard (200..<300).contains(response.status) else {
                throw StatusFailure(status: response.status, message: "Non-success status code \(response.status) for asset: \(asset.urlPath) (version \(version))")
            }
            if let hash = asset.hash {
                if let etag = response[header: "ETag"], let tagged = Self.quotedSHA1(in: etag), tagged != hash {
                    throw MeteorError(.hashMismatch, "Hash mismatch for asset: \(asset.urlPath) (version \(version), ETag \(tagged))")
                }
                let actual = sink.digestHex()
                guard actual == hash else {
                    throw MeteorError(.hashMismatch, "Hash mismatch for asset: \(asset.urlPath) (version \(version), content SHA-1 \(actual))")
                }
            }
            try sink.sync()
            keep = true
            return .stored
        }
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

    /// A non-2xx answer: retried when transient, else reported with the plugin's wording.
    struct StatusFailure: Error {
        let status: Int
        let message: String
    }

    private func withRetries<T: Sendable>(what: String, _ body: () async throws -> T) async throws -> T {
        var attempt = 1
        while true {
            do {
                return try await body()
            } catch let failure as StatusFailure {
                guard RetryPolicy.isTransient(status: failure.status), let delay = retry.delay(after: attempt) else {
                    throw MeteorError(.httpStatus, failure.message)
                }
                try await Task.sleep(nanoseconds: UInt64(delay * 1e9))
            } catch {
                guard RetryPolicy.isTransient(error), let delay = retry.delay(after: attempt) else {
                    if RetryPolicy.isTransient(error) {
                        let detail = (error as? any ClientctlError)?.message ?? "\(error)"
                        throw MeteorError(.network, "Could not download \(what) after \(attempt) attempts: \(detail)",
                                          underlying: error)
                    }
                    throw error
                }
                try await Task.sleep(nanoseconds: UInt64(delay * 1e9))
            }
            attempt += 1
        }
    }
}

import ClientFoundation
import ClientUpdater
import Foundation
import SignedManifest
import StrictJSON

extension ArchiveInstaller {
    /// The verified manifests of `offered` (releases offered beside `newest`, which names
    /// them by digest: docs/targeting.md#two-releases-at-once), from `alongside/` where kept,
    /// else from `index.json`, read at most once. A release the index does not hold as named
    /// is left out: `index.json` is not signed as a whole and can only serve exactly the
    /// manifest the verified newest names. Kept by digest (verified again when read), so a
    /// device that stays beside the newest reads `index.json` once, not at every check.
    func offeredManifests(
        _ offered: [AlongsideRelease], newest: Manifest, manifestURL: URL, verifier: ManifestVerifier
    ) async throws -> [Manifest] {
        guard !offered.isEmpty else { return [] }
        let kept = AlongsideStore(layout: layout)
        defer { kept.prune(keeping: Set((newest.alongside + newest.pins.map(\.release)).map(\.digest))) }
        var out: [Manifest] = []
        var index: ReleaseIndex?
        var indexRead = false
        for named in offered {
            if let release = kept.read(named, verifier: verifier) {
                out.append(release)
                continue
            }
            if !indexRead {
                index = try await fetchIndex(manifestURL: manifestURL)
                indexRead = true
            }
            guard let release = index?.releases.lazy.compactMap({ verifier.verify($0).manifest }).first(where: { named.names($0) }) else {
                channel.logger.debug("release \(named.version), named by release \(newest.version), is not in index.json as signed")
                continue
            }
            kept.keep(release)
            out.append(release)
        }
        return out
    }

    /// `index.json` beside `manifestURL`, or nil when the feed has none (404, 410).
    func fetchIndex(manifestURL: URL) async throws -> ReleaseIndex? {
        guard let indexURL = URL(string: "index.json", relativeTo: manifestURL)?.absoluteURL else { return nil }
        let fetched: Downloader.SmallFetch
        do {
            fetched = try await channel.downloader.fetchSmall(indexURL, cap: StrictJSON.Limits.index.maxBytes)
        } catch let error as UpdaterError where error.httpStatus == 404 || error.httpStatus == 410 {
            return nil  // index.json is optional: a feed without one has no other release to offer
        }
        guard case .fetched(let body, _) = fetched else { return nil }
        return try ReleaseIndex.parse(body, source: indexURL.absoluteString)
    }
}

/// `alongside/<digest>.json`: the verified manifests of the releases offered beside the
/// channel's newest, by the digest the newest names them with (a file in the root is not
/// trusted: each is verified again when read).
struct AlongsideStore {
    let layout: RootLayout

    private var folder: String { layout.store("alongside") }
    private func path(_ digest: String) -> String { folder + "/" + digest + ".json" }

    /// The kept manifest `named` names, when it is kept and still verifies.
    func read(_ named: AlongsideRelease, verifier: ManifestVerifier) -> Manifest? {
        guard let data = try? BoundedFile.read(path(named.digest), cap: 64 * 1024, code: SignedArchiveError.Code.corruptState) else {
            return nil
        }
        guard let manifest = verifier.verify(bytes: [UInt8](data), source: path(named.digest)).manifest, named.names(manifest) else {
            return nil
        }
        return manifest
    }

    /// Keeps `manifest` by its digest (best effort: without it the next check reads the index again).
    func keep(_ manifest: Manifest) {
        try? AtomicFile.makeDirectory(folder)
        try? AtomicFile.write(Data(manifest.jsonBytes()), to: path(manifest.signedDigest))
    }

    /// Removes every kept manifest but those of `digests`.
    func prune(keeping digests: Set<String>) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        for name in names where !digests.contains(String(name.dropLast(5))) || !name.hasSuffix(".json") {
            unlink(folder + "/" + name)
        }
    }
}

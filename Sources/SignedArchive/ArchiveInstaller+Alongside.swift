import ClientFoundation
import ClientUpdater
import Foundation
import SignedManifest
import StrictJSON

extension ArchiveInstaller {
    /// What this device takes when the channel's newest release is not for it (its target,
    /// its rollout place, a blacklisting) and the newest names older releases beside it
    /// (docs/targeting.md#two-releases-at-once): the newest of those that is for it, by the
    /// same rules as the newest (signature, app and channel, floor, shell, expiry, target,
    /// rollout, blacklist); nil when none is.
    ///
    /// Each is the exact manifest the verified newest names by digest, so `index.json`,
    /// which is not signed as a whole, cannot serve another signing of it. They are kept in
    /// `alongside/` by digest (verified again when read), so a device that stays on one
    /// fetches `index.json` once, not at every check.
    ///
    /// A `pin` that holds this device offers its release too, and nothing above it.
    func alongsideChoice(
        _ head: Manifest, pin: ReleasePin?, state: DeviceState, policy: ArchiveDecision.Policy, manifestURL: URL,
        verifier: ManifestVerifier
    ) async throws -> (Manifest, ArchiveDecision.Decision)? {
        var offered = head.alongside
        if let pin, pin.release.version < head.version {
            offered = offered.filter { $0.version < pin.release.version } + [pin.release]
            offered.sort { $1.version < $0.version }
        }
        guard !offered.isEmpty else { return nil }
        let kept = AlongsideStore(layout: layout)
        defer { kept.prune(keeping: Set((head.alongside + head.pins.map(\.release)).map(\.digest))) }
        let floor = state.archive.highestAccepted.flatMap(Version.init)
        var index: ReleaseIndex?
        var indexRead = false
        for named in offered {
            if state.blacklist.contains(named.version.description) { continue }
            if let floor, named.version < floor { continue }  // this device accepted a newer release: never down
            var release = kept.read(named, verifier: verifier)
            if release == nil {
                if !indexRead {
                    index = try await fetchIndex(manifestURL: manifestURL)
                    indexRead = true
                }
                release = index?.releases.lazy.compactMap { verifier.verify($0).manifest }.first { named.names($0) }
                if let release { kept.keep(release) }
            }
            guard let release else {
                channel.logger.debug("release \(named.version), named by release \(head.version), is not in index.json as signed")
                continue
            }
            guard ArchiveDecision.acceptsFallback(release, floor: floor, policy: policy) else { continue }
            let decision = try ArchiveDecision.decide(
                release, state: state, isUnpacked: FileManager.default.fileExists(atPath: layout.clientDirectory(release.version)),
                policy: policy, deviceId: try DeviceIdentity.readOrCreate(layout))
            switch decision {
            case .install, .upToDate: return (release, decision)
            case .skip, .notTargeted: continue
            }
        }
        return nil
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

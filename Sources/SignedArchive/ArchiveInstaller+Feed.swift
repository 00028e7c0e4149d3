import ClientFoundation
import ClientUpdater
import Foundation
import SignedManifest

extension ArchiveInstaller {
    /// What the feed step read: the channel's manifest, verified with the newest trusted
    /// root, and the rollout role's restriction in force for it, if any.
    struct FeedRead {
        let manifestURL: URL
        let manifest: Manifest
        /// The manifest's bytes, kept for the next check when the rollout defers it.
        let body: Data
        let etag: String?
        let verifier: ManifestVerifier
        let restriction: Restriction?
    }

    /// The feed: nothing changed since the last check, or a manifest to decide on.
    enum Feed {
        case unchanged(String)
        case read(FeedRead)
    }

    /// The first step of a check: the manifest (or its 304), the trust roots walked when a
    /// new manifest is read (TUF §5.3: a root that retired a stolen key is in force
    /// first), and the restriction read at every check of a root with a rollout role (a
    /// halt must reach devices whose manifest did not change). A release the rollout did
    /// not admit yet is decided again from its kept manifest on a 304. Records the
    /// restriction's ETag in `state`; the manifest's ETag is the caller's to record once
    /// its decision is carried out.
    func readFeed(state: inout DeviceState, deferred: DeferredManifest) async throws -> Feed {
        guard let manifestURL = URL(string: channel.settings.manifestURL) else {
            throw SignedArchiveError(.configInvalid, "\(layout.config) has no manifestURL")
        }
        let downloader = channel.downloader
        // The roots live beside the root's own channel, whichever channel the device follows.
        let refresh = TrustRefresh(store: channel.trust, downloader: downloader, manifestURL: channel.rootsURL ?? manifestURL, now: channel.now())
        let fetched = try await downloader.fetchSmall(manifestURL, cap: 64 * 1024, ifNoneMatch: state.archive.manifestETag)
        let body: Data
        let etag: String?
        let verifier: ManifestVerifier
        // The rollout role's restriction (docs/formats.md#restrictions): read at every check
        // of a device whose root has that role — one more conditional request, a 304 or a
        // 404 while nothing changes — because a halt must reach devices whose manifest did not change.
        let restrictions = KeptRestriction(layout: layout, downloader: downloader, manifestURL: manifestURL)
        func fetchRestriction(_ root: TrustRoot, state: inout DeviceState) async throws -> KeptRestriction.Fetched? {
            guard root.rollout != nil else { return nil }
            let fetched = try await restrictions.fetch(etag: state.archive.restrictionETag, naming: state.archive.restrictionSHA256)
            state.archive.restrictionETag = fetched.etag
            state.archive.restrictionSHA256 = fetched.bytes.map { Digest.hex(.sha256, of: $0) }
            return fetched
        }
        let restrictionFetch: KeptRestriction.Fetched?
        switch fetched {
        case .fetched(let fresh, let freshETag):
            body = fresh
            etag = freshETag
            // Roots before a new manifest is read (TUF §5.3): it is verified with the newest
            // trusted root, so a root that retired a stolen key is in force first.
            verifier = ManifestVerifier(root: try await refresh.run())
            restrictionFetch = try await fetchRestriction(verifier.root, state: &state)
        default:
            // A 304 needs no root walk (one request per idle check); an expired root is
            // still walked and refused as on any check. A release this device's rollout
            // place did not admit yet is decided again from its kept manifest: time moves
            // the rollout's steps, the manifest stays the same.
            try await refresh.runIfExpired()
            let current = ManifestVerifier(root: try channel.trust.current())
            restrictionFetch = try await fetchRestriction(current.root, state: &state)
            let kept = deferred.read()
            if kept == nil, restrictionFetch?.changed != true {
                return .unchanged("up to date (manifest not modified since the last check)")
            }
            if let kept, current.verify(bytes: kept, source: layout.deferredManifest).manifest != nil {
                body = Data(kept)
                etag = state.archive.manifestETag
                verifier = current
            } else {
                // The kept copy no longer verifies (a damaged root folder), or a changed
                // restriction must be judged against the manifest: read the feed again.
                guard case .fetched(let fresh, let freshETag) = try await downloader.fetchSmall(manifestURL, cap: 64 * 1024) else {
                    throw SignedArchiveError(.internalError, "GET \(manifestURL.absoluteString): not modified without a condition")
                }
                body = fresh
                etag = freshETag
                verifier = ManifestVerifier(root: try await refresh.run())
            }
        }
        let manifest = try verifier.verify(bytes: body, source: manifestURL.absoluteString)
            .get(context: "manifest \(manifestURL.absoluteString)")
        try channel.requireFollowable(by: verifier.root)  // a chosen channel the root in force still allows
        // A verified signed time: the device's time is at least this (docs/device-time.md#the-floor).
        channel.clock?.witnessed(manifest.published, source: "release \(manifest.version) published")
        var restriction: Restriction?
        if let fetched = restrictionFetch, let bytes = fetched.bytes {
            // A refused restriction throws: a bad release, nothing installed, nothing revoked.
            switch try Restriction.check(bytes, for: manifest, root: verifier.root, now: channel.now(), source: fetched.source) {
            case .inForce(let inForce):
                restriction = inForce
                channel.clock?.witnessed(inForce.issued, source: "the rollout role's restriction of release \(inForce.version) issued")
            case .ignored(let why): channel.logger.debug("\(fetched.source): \(why)")
            }
        }
        if let fetched = restrictionFetch { restrictions.keep(fetched) }
        return .read(
            FeedRead(manifestURL: manifestURL, manifest: manifest, body: body, etag: etag, verifier: verifier, restriction: restriction))
    }
}

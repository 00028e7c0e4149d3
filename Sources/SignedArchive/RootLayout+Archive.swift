import ClientFoundation
import ClientUpdater

/// The archive channel's part of a device root: `clients/`.
extension RootLayout {
    /// `clients/`: the archive channel's store.
    package var clients: String { store("clients") }
    /// `clients/v<version>`: the verified, pristine tree of an archive release.
    package func clientDirectory(_ version: Version) -> String { clients + "/v" + version.description }
    /// `clients/v<version>.json`: the verified manifest that produced it.
    package func clientSidecar(_ version: Version) -> String { clientDirectory(version) + ".json" }
    /// `deferred-manifest.json`: the verified manifest of a release this device's rollout
    /// place does not admit yet, re-read on a `304` so an idle check stays one `304`.
    package var deferredManifest: String { store("deferred-manifest.json") }
    /// `restriction.json`: the channel's last `restriction.json` as fetched (re-verified
    /// whenever read), so a `304` for it decides again from the same bytes.
    package var keptRestriction: String { store("restriction.json") }
    /// `media-import/`: what a check from offline media copied from the media, read from
    /// there and removed when the check ends (docs/offline-media.md).
    package var mediaImport: String { store("media-import") }
}

/// The archive channel's trust roots on the device: `trust/<N>.json`, every root it accepted.
extension RootLayout {
    /// `trust/`.
    package var trust: String { store("trust") }
    /// `trust/<N>.json`.
    package func trustRoot(_ version: Int) -> String { trust + "/\(version).json" }
}

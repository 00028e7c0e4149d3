import ClientUpdater

/// The archive channel's part of a device root: `clients/`.
extension RootLayout {
    /// `clients/`: the archive channel's store.
    public var clients: String { store("clients") }
    /// `clients/v<version>`: the verified, pristine tree of an archive release.
    public func clientDirectory(_ version: Version) -> String { clients + "/v" + version.description }
    /// `clients/v<version>.json`: the verified manifest that produced it.
    public func clientSidecar(_ version: Version) -> String { clientDirectory(version) + ".json" }
    /// `deferred-manifest.json`: the verified manifest of a release this device's rollout
    /// place does not admit yet, re-read on a `304` so an idle check stays one `304`.
    public var deferredManifest: String { store("deferred-manifest.json") }
}

/// The archive channel's trust roots on the device: `trust/<N>.json`, every root it accepted.
extension RootLayout {
    /// `trust/`.
    public var trust: String { store("trust") }
    /// `trust/<N>.json`.
    public func trustRoot(_ version: Int) -> String { trust + "/\(version).json" }
}

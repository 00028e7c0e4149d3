import ClientFoundation
import ClientUpdater
import Foundation
import SignedManifest

/// The trust roots a device accepted, `trust/<N>.json` (each written once, atomically,
/// after it verified), and the implicit root of its `--trust` keys when it has none.
package struct TrustStore: Sendable {
    package let layout: RootLayout
    /// The channel's settings (the `--trust` keys, whether a root was pinned).
    package let settings: ArchiveSettings
    /// The application the root is for.
    package let app: String
    /// Roots already parsed and checked, by the bytes of their file.
    package let reads: VerifiedReads

    package init(layout: RootLayout, settings: ArchiveSettings, app: String, reads: VerifiedReads = .shared) {
        self.layout = layout
        self.settings = settings
        self.app = app
        self.reads = reads
    }

    /// Every stored root that parses, lowest version first.
    package func storedRoots() -> [TrustRoot] {
        storedVersions().compactMap(storedRoot)
    }

    /// The `N` of every `trust/<N>.json`, lowest first.
    private func storedVersions() -> [Int] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: layout.trust)) ?? []
        let versions = names.compactMap { name -> Int? in
            guard name.hasSuffix(".json"), let n = Int(name.dropLast(5)), n >= 1, layout.trustRoot(n).hasSuffix("/" + name) else { return nil }
            return n
        }
        return versions.sorted()
    }

    /// `trust/<n>.json` read now, when it parses, is root `n` and a threshold of its own root
    /// keys signed it. The file is read at every call; its bytes are parsed and its
    /// signatures checked only when they differ from every root ``reads`` holds.
    private func storedRoot(_ n: Int) -> TrustRoot? {
        let path = layout.trustRoot(n)
        guard let data = try? BoundedFile.read(path, cap: TrustRoot.maxBytes, code: SignedArchiveError.Code.corruptState),
            let root = reads.selfSignedRoot(data, source: path), root.version == n
        else { return nil }
        return root
    }

    /// The root the device trusts now: its newest stored root, else the implicit root of
    /// its `--trust` keys.
    /// - Throws: ``SignedArchiveError`` `.configInvalid` when a pinned root is missing.
    package func current() throws -> TrustRoot {
        // The newest that parses: the last of storedRoots(), without reading the older ones.
        if let newest = storedVersions().reversed().lazy.compactMap(storedRoot).first { return newest }
        guard settings.pinnedRoot != true else {
            throw SignedArchiveError(.configInvalid, "\(layout.trust) holds no readable trust root, but this root was initialised with --trust-root")
        }
        let keys = try settings.trustedKeys.enumerated().map { try Ed25519.PublicKey(pem: $1, source: "trusted key #\($0 + 1)") }
        return .implicit(trusting: keys, app: app, channel: settings.channel)
    }

    /// Every release key of every root the device accepted, and its `--trust` keys: what
    /// re-verifies the sidecars of installed versions (one signature suffices there: the
    /// threshold was met when they were installed, and rotating a key never drops a
    /// version that was verified).
    package func everyReleaseKey() -> [Ed25519.PublicKey] {
        var keys = settings.trustedKeys.compactMap { try? Ed25519.PublicKey(pem: $0) }
        for root in storedRoots() { keys += root.release.keyIds.compactMap { root.keys[$0] } }
        var seen = Set<String>()
        return keys.filter { seen.insert($0.keyId).inserted }
    }

    /// Stores an accepted root (atomic write, then the folder synced).
    package func save(_ root: TrustRoot) throws {
        try AtomicFile.makeDirectory(layout.trust)
        try AtomicFile.write(Data(root.jsonBytes()), to: layout.trustRoot(root.version))
    }
}

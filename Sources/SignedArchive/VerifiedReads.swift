import Foundation
import SignedManifest

/// What a device learnt from parsing and verifying the files it reads again and again —
/// its trust roots (`trust/<N>.json`) and the sidecars of its installed versions
/// (`clients/vX.Y.Z.json`) — kept by the exact bytes read and the exact keys they were
/// verified with, so `status`, every check and every served request do not parse the same
/// PEM keys and verify the same signatures again.
///
/// Nothing is weaker: a hit needs the same bytes (compared whole, not by a digest) and, for
/// a sidecar, the same release keys and threshold; a file that changed on disk is a miss
/// and is parsed and verified again; a file that failed is never stored, so it is refused
/// again at every read. The files are still read (and their names listed) at every call:
/// only the parsing and the signature checks are saved.
package final class VerifiedReads: Sendable {
    /// The one a device's stores share (a process serves one device root, or the
    /// simulator's many devices, whose identical files are worth the same).
    package static let shared = VerifiedReads()

    /// Most roots kept: a device holds a handful; each key is the file (at most
    /// `TrustRoot.maxBytes`, 64 KiB), so at most 1 MiB of bytes plus the parsed roots.
    package static let rootCapacity = 16
    /// Most sidecars kept: a device keeps a few versions, a simulator's devices share
    /// theirs; each key holds the file (at most ``ArchiveStore/sidecarCap``, 64 KiB), so at
    /// most 4 MiB of bytes plus the parsed manifests (a few KiB each in practice).
    package static let sidecarCapacity = 64

    /// Roots that parsed and carry a threshold of signatures by their own root keys, by
    /// the bytes of their file. Which version a root must be is checked at each read.
    package let roots: BoundedCache<Data, TrustRoot>
    /// Sidecars whose signatures and fields verified, by their bytes and the verifier's
    /// release keys and threshold. Which version a sidecar must be is checked at each read.
    package let sidecars: BoundedCache<SidecarKey, Manifest>

    package init(rootCapacity: Int = VerifiedReads.rootCapacity, sidecarCapacity: Int = VerifiedReads.sidecarCapacity) {
        roots = BoundedCache(capacity: rootCapacity)
        sidecars = BoundedCache(capacity: sidecarCapacity)
    }

    /// A sidecar's bytes and everything of the verifier its verification depends on: the
    /// release role's key ids and threshold, and the key each id names.
    package struct SidecarKey: Hashable, Sendable {
        let bytes: Data
        let keyIds: [String]
        let threshold: Int
        let keys: [Ed25519.PublicKey?]

        init(bytes: Data, verifier: ManifestVerifier) {
            self.bytes = bytes
            let release = verifier.root.release
            keyIds = release.keyIds
            threshold = release.threshold
            keys = release.keyIds.map { verifier.root.keys[$0] }
        }
    }

    /// The root in `bytes` when it parses and a threshold of its own root keys signed it
    /// (parsed once per distinct bytes); nil otherwise, every time.
    package func selfSignedRoot(_ bytes: Data, source: String) -> TrustRoot? {
        roots.value(for: bytes) {
            guard let root = try? TrustRoot.parse(bytes, source: source), root.selfSigners.count >= root.root.threshold else { return nil }
            return root
        }
    }

    /// The manifest in `bytes` when `verifier` accepts it (verified once per distinct bytes
    /// and keys); nil otherwise, every time.
    package func verifiedSidecar(_ bytes: Data, verifier: ManifestVerifier, source: String) -> Manifest? {
        sidecars.value(for: SidecarKey(bytes: bytes, verifier: verifier)) {
            verifier.verify(bytes: bytes, source: source).manifest
        }
    }
}

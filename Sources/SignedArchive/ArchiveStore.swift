import ClientFoundation
import ClientUpdater
import Foundation
import SignedManifest

/// The archive channel's part of a device root: `clients/vX.Y.Z/` folders, their
/// `vX.Y.Z.json` sidecars, and `clients/.staging-*` work folders.
///
/// A version exists only once its folder has been renamed into place, and its sidecar
/// is written before that rename, so a listed version is always complete and verified.
package struct ArchiveStore: Sendable {
    package let layout: RootLayout
    /// Where the keys come from: fixed, or every release key the device ever trusted
    /// (read again each time, so a root accepted during a check counts at once).
    private let keys: Keys
    private enum Keys: Sendable {
        case fixed(ManifestVerifier)
        case trust(TrustStore)
    }

    /// The verifier of sidecars: every sidecar is verified again when it is read, with
    /// one signature of any release key the device trusted (the threshold was met when
    /// the version was installed).
    package var verifier: ManifestVerifier {
        switch keys {
        case .fixed(let verifier): return verifier
        case .trust(let trust): return ManifestVerifier(trustedKeys: trust.everyReleaseKey())
        }
    }

    /// Most bytes read from a sidecar (the manifest cap, docs/threat-model.md#caps).
    package static let sidecarCap = 64 * 1024

    package init(layout: RootLayout, verifier: ManifestVerifier) {
        self.layout = layout
        self.keys = .fixed(verifier)
    }

    /// A store whose sidecars verify with any release key `trust` ever held.
    package init(layout: RootLayout, trust: TrustStore) {
        self.layout = layout
        self.keys = .trust(trust)
    }

    /// The sidecar of `version`: the signed manifest, at most ``sidecarCap`` bytes, whose
    /// signature verifies with a trusted key and whose version is `version`; nil otherwise
    /// (missing, too large, hand-written, re-signed by an unknown key, another version's).
    package func verifiedSidecar(_ version: Version) -> Manifest? {
        verifiedSidecar(version, with: verifier)
    }

    /// The same with a verifier made once for many sidecars (reading the trusted keys
    /// again for each would read every root once per version).
    ///
    /// The sidecar is read at every call; its bytes are verified only when they, or the
    /// verifier's release keys, differ from those of every sidecar ``reads`` holds.
    func verifiedSidecar(_ version: Version, with verifier: ManifestVerifier) -> Manifest? {
        let path = layout.clientSidecar(version)
        guard let data = try? BoundedFile.read(path, cap: Self.sidecarCap, code: SignedArchiveError.Code.corruptState),
            let manifest = reads.verifiedSidecar(data, verifier: verifier, source: path),
            manifest.version == version
        else { return nil }
        return manifest
    }

    /// Sidecars already verified: the trust store's, or the device's shared ones.
    var reads: VerifiedReads {
        switch keys {
        case .fixed: return .shared
        case .trust(let trust): return trust.reads
        }
    }

    /// Complete installed versions, oldest install first.
    package func installedVersions() throws -> [InstalledVersion] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: layout.clients)
        } catch {
            return []
        }
        var result: [InstalledVersion] = []
        let verifier = self.verifier
        for name in names where name.hasPrefix("v") && !name.hasSuffix(".json") {
            guard let version = Version(String(name.dropFirst())), "v\(version)" == name else { continue }
            let dir = layout.clientDirectory(version)
            var st = stat()
            guard lstat(dir, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR else { continue }
            // A folder without its signed, verified manifest is not a version.
            guard let sidecar = verifiedSidecar(version, with: verifier) else { continue }
            let installedAt = Date(timeIntervalSince1970: TimeInterval(st.st_mtim.tv_sec))
            result.append(
                InstalledVersion(
                    id: version.description, directory: dir,
                    minShell: sidecar.minShellVersion, maxShell: sidecar.maxShellVersion,
                    installedAt: installedAt))
        }
        return result.sorted {
            ($0.installedAt ?? .distantPast, Version($0.id) ?? Version(0, 0, 0)) < (
                $1.installedAt ?? .distantPast, Version($1.id) ?? Version(0, 0, 0)
            )
        }
    }

    /// Creates a fresh staging folder `clients/.staging-<label>-<random>` (0700).
    package func makeStagingDirectory(label: String) throws -> String {
        try AtomicFile.makeDirectory(layout.clients)
        let path = layout.clients + "/.staging-\(label)-\(UInt64.random(in: 0...UInt64.max))"
        guard mkdir(path, 0o700) == 0 else { throw SignedArchiveError.io("cannot create staging folder", path: path, errno: errno) }
        return path
    }

    /// Moves a complete, fsynced tree into `clients/v<version>` and makes it durable.
    ///
    /// The sidecar (the verified manifest bytes) is written first; the folder rename is
    /// the commit point; then `clients/` is fsynced.
    package func promote(staging tree: String, version: Version, sidecar: Data) throws {
        let final = layout.clientDirectory(version)
        if FileManager.default.fileExists(atPath: final) {
            throw SignedArchiveError(.alreadyExists, "\(final) exists already; version \(version) is installed")
        }
        try AtomicFile.write(sidecar, to: layout.clientSidecar(version))
        // Where the rename (the commit point) fails, the sidecar written: an orphan, removed.
        try FaultPoint.hit("promote.sidecar-written") { SignedArchiveError.io("cannot move \(tree) to", path: final, errno: $0) }
        guard rename(tree, final) == 0 else {
            let err = errno
            throw SignedArchiveError.io("cannot move \(tree) to", path: final, errno: err)
        }
        try FaultPoint.hit("promote.renamed") { SignedArchiveError.io("cannot fsync folder", path: layout.clients, errno: $0) }
        try AtomicFile.syncDirectory(layout.clients)
    }

    /// Removes an installed version: the folder is first renamed to a `.trash-*` name
    /// (atomic: never half-visible), then the sidecar and the trash are deleted.
    package func remove(_ version: InstalledVersion) throws {
        guard let v = Version(version.id) else { return }
        let dir = layout.clientDirectory(v)
        let trash = layout.clients + "/.trash-v\(v)-\(UInt32.random(in: 0...UInt32.max))"
        if rename(dir, trash) != 0 && errno != ENOENT {
            throw SignedArchiveError.io("cannot remove", path: dir, errno: errno)
        }
        try AtomicFile.syncDirectory(layout.clients)
        unlink(layout.clientSidecar(v))
        try AtomicFile.removeTree(trash)
    }

    /// Deletes leftovers of interrupted runs: `.trash-*` folders, orphan sidecars, temporary
    /// files of atomic writes whose process died, and staging folders other than the resumable download partials in `keep`.
    package func cleanLeftovers(keeping keep: Set<String> = []) {
        AtomicFile.removeStaleTemporaries(in: layout.clients)
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: layout.clients) else { return }
        for name in names {
            let path = layout.clients + "/" + name
            if name.hasPrefix(".trash-") || (name.hasPrefix(".staging-") && !keep.contains(path)) {
                try? AtomicFile.removeTree(path)
            } else if name.hasSuffix(".json"), name.hasPrefix("v"),
                !FileManager.default.fileExists(atPath: String(path.dropLast(5)))
            {
                unlink(path)  // a sidecar whose folder rename never happened
            }
        }
    }
}

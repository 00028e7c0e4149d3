import ClientFoundation
import Foundation
import ReleaseSigning
import SignedManifest
import StrictJSON

/// A release waiting for signatures: `<out>/<channel>/pending/v<version>.json`, the partly
/// signed manifest (its archive is already in place, immutable). Devices never see it: it
/// is not in `manifest.json` or `index.json` until the trust root's release threshold is met.
public enum PendingRelease {
    /// What ``sign(_:signers:)`` did.
    public struct Outcome: Sendable {
        public var manifest: Manifest
        /// True when the threshold was met and the release is now published.
        public var published: Bool
        /// How many more release keys must sign (0 when published or outside a release folder).
        public var missing: Int
        /// Where the manifest was written.
        public var path: String
    }

    /// Writes the pending manifest of `manifest` under `channelFolder`.
    @discardableResult
    public static func write(_ manifest: Manifest, channelFolder: String) throws -> String {
        let path = channelFolder + "/pending/" + "v\(manifest.version).json"
        do {
            try AtomicFile.makeDirectory(channelFolder + "/pending")
            try AtomicFile.write(Data(manifest.jsonBytes()), to: path)
        } catch let error as any ClientctlError {
            throw ArchivePublishingError(.io, error.message)
        }
        return path
    }

    /// Adds the signers' signatures to the manifest at `path`. A pending manifest of a
    /// release folder whose threshold is now met is published (under the channel lock:
    /// `index.json`, then `manifest.json`, then the pending file goes); any other manifest
    /// file is written back with the new signatures.
    /// - Throws: `ArchivePublishingError`: a signer that is not a release key of the folder's
    ///   root (`.untrustedKey`), a version not above the channel's newest (`.notNewer`), a
    ///   version already published (`.conflict`).
    public static func sign(_ path: String, signers: [any DocumentSigner]) async throws -> Outcome {
        try await sign(path, signers: signers, lockHeld: false)
    }

    /// ``sign(_:signers:)``; `lockHeld` when the caller (publish) holds the channel lock.
    static func sign(_ path: String, signers: [any DocumentSigner], lockHeld: Bool) async throws -> Outcome {
        let absolute = path.absoluteStandardizedPath
        let pendingFolder = (absolute as NSString).deletingLastPathComponent
        let isPending = (pendingFolder as NSString).lastPathComponent == "pending"
        let channelFolder = (pendingFolder as NSString).deletingLastPathComponent
        let lock = isPending && !lockHeld ? try DirectoryLock(channelFolder) : nil
        defer { lock?.release() }
        guard let data = FileManager.default.contents(atPath: absolute) else {
            throw ArchivePublishingError(.notFound, "\(path) does not exist")
        }
        let object = try StrictJSON.parseObject(data, limits: .manifest, source: path)
        var manifest = try Manifest.validate(object).mapError { $0.error(context: path) }.get()
        let root = isPending ? try ReleaseRoots.newest(inChannelFolder: channelFolder) : nil
        _ = try ReleaseRoots.missingSignatures(in: root, signers: signers)
        for signer in signers { manifest = try await manifest.addingSignature(by: signer) }
        var missing = 0
        if let root {
            let valid = Threshold.validSigners(manifest.signatures, message: manifest.signedBytes, role: root.release, keys: root.keys)
            missing = max(0, root.release.threshold - valid.count)
        }
        guard isPending, missing == 0 else {
            try write(manifest, to: absolute)
            return Outcome(manifest: manifest, published: false, missing: missing, path: absolute)
        }
        try publish(manifest, channelFolder: channelFolder)
        unlink(absolute)
        return Outcome(manifest: manifest, published: true, missing: 0, path: channelFolder + "/manifest.json")
    }

    static func write(_ manifest: Manifest, to path: String) throws {
        do {
            try AtomicFile.write(Data(manifest.jsonBytes()), to: path)
        } catch let error as any ClientctlError {
            throw ArchivePublishingError(.io, error.message)
        }
    }

    /// The release joins `index.json` and becomes `manifest.json`, with publish's version rules.
    static func publish(_ manifest: Manifest, channelFolder: String) throws {
        let indexPath = channelFolder + "/index.json"
        var index = ReleaseIndex(app: manifest.app, channel: manifest.channel)
        if let data = FileManager.default.contents(atPath: indexPath) { index = try ReleaseIndex.parse(data, source: indexPath) }
        let versions = index.releases.compactMap { $0["version"]?.stringValue.flatMap(Version.init) }
        if versions.contains(manifest.version) {
            throw ArchivePublishingError(.conflict, "version \(manifest.version) is already published on channel \(manifest.channel)")
        }
        if let newest = versions.max(), !(newest < manifest.version) {
            throw ArchivePublishingError(
                .notNewer, "version \(manifest.version) is not above \(newest), the newest release of channel \(manifest.channel)")
        }
        index.insert(manifest)
        do {
            try AtomicFile.write(Data(index.jsonBytes()), to: indexPath)
            try AtomicFile.write(Data(manifest.jsonBytes()), to: channelFolder + "/manifest.json")
        } catch let error as any ClientctlError {
            throw ArchivePublishingError(.io, error.message)
        }
    }
}

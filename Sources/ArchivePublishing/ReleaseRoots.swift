import ClientFoundation
import Foundation
import ReleaseSigning
import SignedManifest

/// The trust roots a release folder publishes for a channel (`<out>/<channel>/root/N.json`).
package enum ReleaseRoots {
    /// The newest root of the channel folder (`nil` when it publishes none): roots 1, 2, …
    /// read in order while they exist.
    /// - Throws: SignedManifest's `SignedManifestError` `.untrustedRoot` for a root file that does not parse.
    package static func newest(inChannelFolder folder: String) throws -> TrustRoot? {
        var newest: TrustRoot?
        var n = 1
        while let data = FileManager.default.contents(atPath: folder + "/root/\(n).json") {
            newest = try TrustRoot.parse(data, source: folder + "/root/\(n).json")
            n += 1
        }
        return newest
    }

    /// How many more distinct release keys must sign after `signers` (0: the threshold of
    /// `root` is met; always 0 without a root).
    /// - Throws: `ArchivePublishingError` `.untrustedKey` naming a signer that is not a
    ///   release key of `root`.
    package static func missingSignatures(in root: TrustRoot?, signers: [any DocumentSigner]) throws -> Int {
        guard let root else { return 0 }
        let ids = Set(signers.map(\.publicKey.keyId))
        if let stranger = ids.sorted().first(where: { !root.release.keyIds.contains($0) }) {
            throw ArchivePublishingError(
                .untrustedKey, "key \(stranger) is not a release key of trust root \(root.version) (\(root.release.keyIds.joined(separator: ", ")))")
        }
        return max(0, root.release.threshold - ids.count)
    }

    /// Checks that `signers` are release keys of `root` and meet its threshold, so that a
    /// manifest written now verifies on devices that follow the root.
    /// - Throws: `ArchivePublishingError` `.untrustedKey` naming a signer that is not a
    ///   release key, `.thresholdNotMet` when too few are given.
    package static func requireThreshold(of root: TrustRoot?, signers: [any DocumentSigner]) throws {
        guard let root else { return }
        let ids = Set(signers.map(\.publicKey.keyId))
        guard try missingSignatures(in: root, signers: signers) == 0 else {
            throw ArchivePublishingError(
                .thresholdNotMet,
                "trust root \(root.version) needs \(root.release.threshold) release keys; \(ids.count) given (repeat --key)")
        }
    }
}

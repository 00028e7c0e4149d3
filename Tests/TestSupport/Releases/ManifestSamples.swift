import ClientFoundation
import ClientUpdater
import Foundation
import ReleaseSigning
import SignedManifest
import StrictJSON

/// Manifests for tests: a valid draft, and signing of arbitrary (even invalid) objects.
public enum ManifestSamples {
    public static let published = Date(timeIntervalSince1970: 1_800_000_000)

    public static func draft(version: String = "1.2.3", extra: JSONObject = JSONObject()) -> ManifestDraft {
        ManifestDraft(
            app: "com.example.notes", channel: "stable", version: Version(version) ?? Version(0, 0, 1),
            url: "v\(version).tar.gz", sha256: String(repeating: "ab", count: 32), size: 12345,
            minShellVersion: Version(1, 0, 0), maxShellVersion: Version(2, 0, 0),
            published: published, expires: published.addingTimeInterval(86_400), extraFields: extra)
    }

    /// Signs `object` as it is (its `keyId` set to the key's unless `keyId` is given).
    public static func sign(_ object: JSONObject, with key: Ed25519.PrivateKey, keyId: String? = nil) throws -> JSONObject {
        var o = object
        o.removeValue(forKey: "signature")
        o["keyId"] = .string(keyId ?? key.publicKey.keyId)
        let sig = try key.signature(for: CanonicalJSON.serialize(o))
        o["signature"] = .string(Data(sig).base64EncodedString())
        return o
    }
}

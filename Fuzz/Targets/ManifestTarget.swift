import ClientFoundation
import ClientUpdater
import StrictJSON

@testable import SignedManifest

/// Manifest field rules and signature check. Whatever the field rules accept must read back
/// identically from its own signed bytes, and keep the rules a device relies on (docs/formats.md#manifest)
/// (a 64-hex sha256, a non-negative size, max ≥ min shell, expires after published).
/// Every input also goes through the full verifier with a fixed trusted key.
enum ManifestTarget: FuzzTarget {
    static let name = "manifest"
    nonisolated(unsafe) static var verifier: ManifestVerifier?

    static func setUp() {
        // A fixed test key (Keys/ holds test-only keys); any valid key exercises the path.
        verifier = try? ManifestVerifier(trustedKeyPEMs: [FuzzKeys.publicPEM])
    }

    static func run(_ data: [UInt8]) {
        _ = verifier?.verify(bytes: data)
        guard let object = try? StrictJSON.parseObject(data, limits: .manifest) else { return }
        guard case .success(let manifest) = Manifest.validate(object) else { return }
        check(manifest, object)
    }

    static func check(_ manifest: Manifest, _ object: JSONObject) {
        guard manifest.sha256.count == 64, manifest.sha256.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) })
        else { FuzzFinding.fail(name, "accepted sha256 is not 64 lowercase hex") }
        guard manifest.size >= 0 else { FuzzFinding.fail(name, "accepted a negative size") }
        if let max = manifest.maxShellVersion, max < manifest.minShellVersion {
            FuzzFinding.fail(name, "accepted maxShellVersion below minShellVersion")
        }
        if let expires = manifest.expires, expires <= manifest.published {
            FuzzFinding.fail(name, "accepted expires not after published")
        }
        guard Version(manifest.version.description) == manifest.version else {
            FuzzFinding.fail(name, "version does not survive printing")
        }
        // The signed bytes of an accepted manifest are its canonical form without
        // `signature`: putting the signature back must give the same manifest.
        guard var signed = try? StrictJSON.parseObject(manifest.signedBytes, limits: StrictJSON.Limits(maxBytes: 1 << 20)) else {
            FuzzFinding.fail(name, "signed bytes of an accepted manifest do not parse")
        }
        signed["signature"] = object["signature"]
        guard case .success(let again) = Manifest.validate(signed), again.signedBytes == manifest.signedBytes else {
            FuzzFinding.fail(name, "an accepted manifest does not read back from its signed bytes")
        }
    }
}

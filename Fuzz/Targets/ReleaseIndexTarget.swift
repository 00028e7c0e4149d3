@testable import SignedManifest

/// `index.json`: the shape check, then every entry through the manifest rules, as a device
/// reads an index; accepted entries keep the manifest target's properties.
enum ReleaseIndexTarget: FuzzTarget {
    static let name = "release-index"

    static func setUp() { ManifestTarget.setUp() }

    static func run(_ data: [UInt8]) {
        guard let index = try? ReleaseIndex.parse(data) else { return }
        if let verifier = ManifestTarget.verifier { _ = index.validReleases(with: verifier) }
        for entry in index.releases {
            if case .success(let manifest) = Manifest.validate(entry) { ManifestTarget.check(manifest, entry) }
        }
    }
}

import ClientFoundation
import ClientUpdater
import Foundation
import ReleaseSigning
import SignedManifest
import TestSupport
import Testing

@Suite struct ManifestPolicyTests {
    let manifest: Manifest

    init() throws {
        manifest = try ManifestSamples.draft().signed(with: try Ed25519.PrivateKey.generate())
    }

    func decide(
        app: String = "com.example.notes", channel: String = "stable", shell: String = "1.5.0",
        floor: String? = nil, now: Date = ManifestSamples.published
    ) -> ManifestPolicy.Decision {
        ManifestPolicy.evaluate(
            manifest, app: app, channel: channel, shellVersion: Version(shell) ?? Version(0, 0, 0),
            floor: floor.flatMap(Version.init), now: now)
    }

    @Test func rulesApplyInOrder() {
        #expect(decide() == .accept)
        #expect(decide(app: "com.example.other") == .wrongApp(expected: "com.example.other", actual: "com.example.notes"))
        #expect(decide(channel: "beta") == .wrongChannel(expected: "beta", actual: "stable"))
        #expect(decide(shell: "0.9.0") == .incompatibleShell(shell: Version(0, 9, 0)))
        #expect(decide(shell: "2.0.1") == .incompatibleShell(shell: Version(2, 0, 1)))
        #expect(decide(shell: "2.0.0") == .accept)
        #expect(decide(floor: "1.2.3") == .accept)
        #expect(decide(floor: "1.3.0") == .belowFloor(floor: Version(1, 3, 0)))
        let late = ManifestSamples.published.addingTimeInterval(86_401)
        #expect(decide(now: late) == .expired(ManifestSamples.published.addingTimeInterval(86_400)))
        #expect(decide(floor: "1.3.0").message(for: manifest).contains("rollback"))
    }

    @Test func archiveURLSchemes() throws {
        // Set-up failures throw; only the policy's own refusal is nil, so a broken set-up
        // cannot pass as a refusal.
        let key = try Ed25519.PrivateKey.generate()
        func resolve(_ url: String, from manifestURL: String, insecure: Bool = false) throws -> String? {
            var o = manifest.object
            o["url"] = .string(url)
            let signed = try ManifestSamples.sign(o, with: key)
            let m = try #require(ManifestVerifier(trustedKeys: [key.publicKey]).verify(signed).manifest)
            let base = try #require(URL(string: manifestURL))
            switch ManifestPolicy.archiveURL(for: m, manifestURL: base, allowInsecureHTTP: insecure) {
            case .success(let resolved): return resolved.absoluteString
            case .failure: return nil
            }
        }
        #expect(try resolve("v1.tar.gz", from: "https://cdn.example/stable/manifest.json") == "https://cdn.example/stable/v1.tar.gz")
        #expect(try resolve("v1.tar.gz", from: "http://127.0.0.1:8080/stable/manifest.json") == "http://127.0.0.1:8080/stable/v1.tar.gz")
        #expect(try resolve("v1.tar.gz", from: "http://cdn.example/stable/manifest.json") == nil)
        #expect(try resolve("v1.tar.gz", from: "http://cdn.example/stable/manifest.json", insecure: true) == "http://cdn.example/stable/v1.tar.gz")
        #expect(try resolve("file:///tmp/v1.tar.gz", from: "https://cdn.example/stable/manifest.json") == nil)
        #expect(try resolve("v1.tar.gz", from: "file:///srv/stable/manifest.json") == "file:///srv/stable/v1.tar.gz")
        #expect(try resolve("ftp://x/v1.tar.gz", from: "https://cdn.example/m.json") == nil)
        #expect(try resolve("http://127.9.0.1/v1.tar.gz", from: "https://cdn.example/m.json") == "http://127.9.0.1/v1.tar.gz")
        #expect(try resolve("http://127.0.0.1.evil.example/v1.tar.gz", from: "https://cdn.example/m.json") == nil)
    }
}

import ClientUpdater
import Foundation
import ReleaseSigning
import SignedManifest
import TestSupport
import Testing

@Suite struct ReleaseIndexTests {
    @Test func entriesStayNewestFirstAndVerifyLikeManifests() throws {
        let key = try Ed25519.PrivateKey.generate()
        var index = ReleaseIndex(app: "com.example.notes", channel: "stable")
        for v in ["1.0.0", "1.10.0", "1.2.0", "1.10.0-beta.1"] {
            index.insert(try ManifestSamples.draft(version: v).signed(with: key))
        }
        let parsed = try ReleaseIndex.parse(index.jsonBytes())
        #expect(parsed == index)
        #expect(parsed.releases.compactMap { $0["version"]?.stringValue } == ["1.10.0", "1.10.0-beta.1", "1.2.0", "1.0.0"])
        let verifier = ManifestVerifier(trustedKeys: [key.publicKey])
        #expect(parsed.verify(with: verifier).allSatisfy { $0.manifest != nil })

        // One tampered entry fails alone.
        var tampered = parsed
        tampered.releases[2]["size"] = .integer(1)
        let statuses = tampered.verify(with: verifier)
        #expect(statuses.map { $0.manifest == nil } == [false, false, true, false])
        #expect(tampered.validReleases(with: verifier).map(\.version.description) == ["1.10.0", "1.10.0-beta.1", "1.0.0"])
    }

    @Test func shapeErrorsAreNamed() {
        func message(_ text: String) -> String? {
            do {
                _ = try ReleaseIndex.parse(Array(text.utf8), source: "idx.json")
                return nil
            } catch {
                return (error as? SignedManifestError)?.message
            }
        }
        #expect(
            message(#"{"format": "x", "app": "a", "channel": "c", "releases": []}"#)
                == #"idx.json: format is "x", expected "signed-client-index-v1""#)
        #expect(
            message(#"{"format": "signed-client-index-v1", "app": "a", "channel": "c", "releases": [1]}"#)
                == "idx.json: releases[0] must be an object, got integer")
        #expect(
            message(#"{"format": "signed-client-index-v1", "app": "a", "channel": "c"}"#)
                == "idx.json: field 'releases' must be an array")
        #expect(message(#"{"format": "signed-client-index-v1", "format": "x"}"#)?.contains("duplicate key") == true)
    }
}

import ApplyPolicy
import ClientFoundation
import Foundation
import ReleaseSigning
import SignedManifest
import StrictJSON
import TestSupport
import Testing

/// The manifest's `apply` member (docs/formats.md#apply): signed like every field, read
/// strictly where this build knows the member and leniently where a newer publisher may
/// say more (an unknown mode is `next-start`, unknown members are ignored).
@Suite struct ManifestApplyTests {
    let key: Ed25519.PrivateKey
    let verifier: ManifestVerifier

    init() throws {
        key = try Ed25519.PrivateKey.generate()
        verifier = ManifestVerifier(trustedKeys: [key.publicKey])
    }

    func verify(apply: JSONValue) throws -> ManifestVerification {
        var object = ManifestSamples.draft().unsignedObject(keyId: key.publicKey.keyId)
        object["apply"] = apply
        let signed = try ManifestSamples.sign(object, with: key)
        return verifier.verify(bytes: JSONPrettyPrinter.render(.object(signed)))
    }

    @Test func aDraftsPolicyIsSignedAndReadBack() throws {
        var draft = ManifestSamples.draft()
        let policy = try ApplyPolicy(mode: .idle, idleSeconds: 300, deadline: ManifestSamples.published.addingTimeInterval(3_600))
        draft.apply = policy
        let manifest = try draft.signed(with: key)
        let verified = try #require(verifier.verify(bytes: manifest.jsonBytes()).manifest)
        #expect(verified.apply == policy)
        #expect(
            verified.object["apply"]
                == .object([
                    "mode": .string("idle"), "idleSeconds": .integer(300), "deadline": .string("2027-01-15T09:00:00Z"),
                    "graceSeconds": .integer(3_600),
                ]))
        // Changing the policy breaks the signature: it is signed like every field.
        var edited = verified.object
        edited["apply"] = try ApplyPolicy(mode: .now).jsonValue
        #expect(verifier.verify(bytes: JSONPrettyPrinter.render(.object(edited))).manifest == nil)
    }

    @Test func anUnknownModeIsNextStartAndUnknownMembersAreIgnored() throws {
        let m = try verify(apply: .object(["mode": .string("on-full-moon"), "phase": .string("waxing")])).get()
        #expect(m.object["apply"]?.objectValue?["phase"] == .string("waxing"), "kept as signed")
        #expect(m.apply?.mode == .nextStart && m.apply?.unknownMode == "on-full-moon")
    }

    @Test(arguments: [
        (JSONValue.string("now"), "must be an object"),
        (.object(["idleSeconds": .integer(5)]), "has no 'mode'"),
        (.object(["mode": .integer(1)]), "'apply.mode' must be a string"),
        (.object(["mode": .string("idle")]), "needs idle seconds"),
        (.object(["mode": .string("idle"), "idleSeconds": .double(1.5)]), "must be an integer"),
        (.object(["mode": .string("now"), "graceSeconds": .integer(604_801)]), "out of range"),
        (.object(["mode": .string("now"), "deadline": .string("tomorrow")]), "apply deadline"),
    ])
    func aMalformedPolicyRejectsTheManifestNamingIt(apply: JSONValue, says: String) throws {
        guard let rejection = try verify(apply: apply).rejection else {
            Issue.record("\(apply) was accepted")
            return
        }
        #expect(rejection.field == "apply" && "\(rejection)".contains(says), "\(rejection)")
    }
}

import ClientFoundation
import ClientUpdater
import Foundation
import ReleaseSigning
import SafeArchive
import SignedManifest
import StrictJSON
import TestSupport
import Testing

@Suite struct ManifestVerifierTests {
    let key: Ed25519.PrivateKey
    let verifier: ManifestVerifier

    init() throws {
        key = try Ed25519.PrivateKey.generate()
        verifier = ManifestVerifier(trustedKeys: [key.publicKey])
    }

    @Test func aSignedDraftVerifiesAndReadsBack() throws {
        let manifest = try ManifestSamples.draft().signed(with: key)
        let bytes = manifest.jsonBytes()
        let verified = try #require(verifier.verify(bytes: bytes).manifest)
        #expect(verified == manifest)
        #expect(verified.version == Version(1, 2, 3))
        #expect(verified.size == 12345)
        #expect(verified.maxShellVersion == Version(2, 0, 0))
        #expect(verified.published == ManifestSamples.published)
        #expect(verified.keyId == key.publicKey.keyId)
        #expect(verified.object.keys.first == "format")
        #expect(verified.isCompatible(withShell: Version(1, 5, 0)))
        #expect(!verified.isCompatible(withShell: Version(2, 0, 1)))
    }

    /// Every field, one at a time, changed to another *valid* value: the signature fails.
    @Test(arguments: [
        ("format", JSONValue.string("signed-client-v2")), ("app", .string("com.example.other")),
        ("channel", .string("beta")), ("version", .string("1.2.4")), ("url", .string("https://evil.example/x.tar.gz")),
        ("sha256", .string(String(repeating: "cd", count: 32))), ("size", .integer(12346)),
        ("minShellVersion", .string("0.9.0")), ("maxShellVersion", .string("9.0.0")),
        ("published", .string("2027-01-15T08:00:01Z")), ("expires", .string("2099-01-01T00:00:00Z")),
        ("note", .string("changed")),
    ])
    func changingAnySignedFieldBreaksTheSignature(field: String, value: JSONValue) throws {
        let manifest = try ManifestSamples.draft(extra: ["note": .string("original")]).signed(with: key)
        var o = manifest.object
        #expect(o[field] != value)
        o[field] = value
        #expect(verifier.verify(o).rejection?.reason == .badSignature)
    }

    @Test func removingOrAddingAFieldBreaksTheSignature() throws {
        let manifest = try ManifestSamples.draft(extra: ["note": .string("x")]).signed(with: key)
        for field in manifest.object.keys where field != "signature" && field != "keyId" {
            var o = manifest.object
            o.removeValue(forKey: field)
            #expect(verifier.verify(o).rejection?.reason == .badSignature, "removed \(field)")
        }
        var added = manifest.object
        added["extra"] = .bool(true)
        #expect(verifier.verify(added).rejection?.reason == .badSignature)
    }

    @Test func unknownFieldsAreSignedAndPreserved() throws {
        let extra: JSONObject = ["releaseNotes": .string("Faster sync"), "rolloutGroup": .object(["percent": .integer(10)])]
        let manifest = try ManifestSamples.draft(extra: extra).signed(with: key)
        let verified = try #require(verifier.verify(bytes: manifest.jsonBytes()).manifest)
        #expect(verified.unknownFields == extra)
        #expect(String(decoding: verified.signedBytes, as: UTF8.self).contains(#""rolloutGroup":{"percent":10}"#))
        var o = manifest.object
        o["rolloutGroup"] = .object(["percent": .integer(100)])
        #expect(verifier.verify(o).rejection?.reason == .badSignature)
    }

    @Test func alteringTheSignatureFails() throws {
        let manifest = try ManifestSamples.draft().signed(with: key)
        for position in [0, 31, 63] {
            var sig = manifest.signature
            sig[position] ^= 0x01
            var o = manifest.object
            o["signature"] = .string(Data(sig).base64EncodedString())
            #expect(verifier.verify(o).rejection?.reason == .badSignature)
        }
        var truncated = manifest.object
        truncated["signature"] = .string(Data(manifest.signature.prefix(63)).base64EncodedString())
        #expect(verifier.verify(truncated).rejection?.field == "signature")
        var notBase64 = manifest.object
        notBase64["signature"] = .string("!!" + (manifest.object["signature"]?.stringValue ?? "").dropFirst(2))
        #expect(verifier.verify(notBase64).rejection?.message == "field 'signature' is not standard base64")
        var missing = manifest.object
        missing.removeValue(forKey: "signature")
        #expect(verifier.verify(missing).rejection?.reason == .missingField)
    }

    @Test func anotherKeyFails() throws {
        let other = try Ed25519.PrivateKey.generate()
        let manifest = try ManifestSamples.draft().signed(with: other)
        let r = try #require(verifier.verify(manifest.object).rejection)
        #expect(r.reason == .untrustedKey)
        #expect(r.message.contains(other.publicKey.keyId))
        // Claiming the trusted key's id does not help: the signature does not verify.
        let forged = try ManifestSamples.sign(manifest.object, with: other, keyId: key.publicKey.keyId)
        #expect(verifier.verify(forged).rejection?.reason == .badSignature)
        // With both keys trusted, the key is chosen by keyId.
        #expect(ManifestVerifier(trustedKeys: [key.publicKey, other.publicKey]).verify(manifest.object).manifest != nil)
        #expect(ManifestVerifier(trustedKeys: []).verify(manifest.object).rejection?.message.contains("no keys are trusted") == true)
    }

    /// Validly signed but invalid fields: the status names the field.
    @Test(arguments: [
        ("format", JSONValue.string("signed-client-v2"), ManifestRejection.Reason.unsupportedFormat),
        ("app", .string("../etc"), .invalidValue), ("app", .integer(1), .wrongType),
        ("channel", .string(".."), .invalidValue), ("channel", .string(""), .invalidValue),
        ("version", .string("v1.2.3"), .invalidValue), ("version", .string("01.2.3"), .invalidValue),
        ("url", .string(""), .invalidValue), ("url", .string("a b"), .invalidValue), ("url", .null, .wrongType),
        ("sha256", .string(String(repeating: "AB", count: 32)), .invalidValue), ("sha256", .string("abc"), .invalidValue),
        ("size", .integer(-1), .invalidValue), ("size", .string("12"), .wrongType), ("size", .double(12.0), .wrongType),
        ("minShellVersion", .string("1.0"), .invalidValue), ("maxShellVersion", .string("0.1.0"), .invalidValue),
        ("published", .string("2027-01-15 08:00:00Z"), .invalidValue), ("published", .string("2027-02-30T08:00:00Z"), .invalidValue),
        ("published", .string("2027-01-15T08:00:00+01:00"), .invalidValue), ("expires", .string("2020-01-01T00:00:00Z"), .invalidValue),
    ])
    func invalidFieldsAreRejectedAfterTheSignature(field: String, value: JSONValue, reason: ManifestRejection.Reason) throws {
        var o = ManifestSamples.draft().unsignedObject(keyId: key.publicKey.keyId)
        o[field] = value
        let signed = try ManifestSamples.sign(o, with: key)
        let r = try #require(verifier.verify(signed).rejection)
        #expect(r.reason == reason)
        #expect(r.field == field)
        #expect(r.message.contains(field))
    }

    @Test(arguments: ["format", "app", "channel", "version", "url", "sha256", "size", "minShellVersion", "published", "keyId"])
    func requiredFieldsMustBePresent(field: String) throws {
        var o = ManifestSamples.draft().unsignedObject(keyId: key.publicKey.keyId)
        o.removeValue(forKey: field)
        let signed = field == "keyId" ? try removingKeyId(ManifestSamples.sign(o, with: key)) : try ManifestSamples.sign(o, with: key)
        let r = try #require(verifier.verify(signed).rejection)
        #expect(r.reason == .missingField)
        #expect(r.message == "required field '\(field)' is missing")
    }

    func removingKeyId(_ o: JSONObject) -> JSONObject {
        var o = o
        o.removeValue(forKey: "keyId")
        return o
    }

    @Test func optionalFieldsMayBeAbsent() throws {
        var draft = ManifestSamples.draft()
        draft.maxShellVersion = nil
        draft.expires = nil
        let m = try draft.signed(with: key)
        #expect(m.maxShellVersion == nil && m.expires == nil)
        #expect(m.object["maxShellVersion"] == nil)
        #expect(m.isCompatible(withShell: Version(99, 0, 0)))
    }

    @Test func malformedBytesAreAStatusNotACrash() {
        let status = verifier.verify(bytes: Array(#"{"a": 1, "a": 2}"#.utf8), source: "m.json")
        #expect(status.rejection?.reason == .malformedJSON)
        #expect(status.rejection?.message.contains("duplicate key") == true)
        #expect(throws: SignedManifestError.self) { try status.get() }
    }

    @Test func archiveCheckComparesSizeThenHash() throws {
        let dir = try TemporaryDirectory("manifest")
        let path = dir.path + "/a.bin"
        let bytes = Data("archive bytes".utf8)
        try bytes.write(to: URL(fileURLWithPath: path))
        var draft = ManifestSamples.draft()
        draft.size = Int64(bytes.count)
        draft.sha256 = Digest.hex(.sha256, of: bytes)
        // What a signed manifest says of its archive, checked as the device checks a download.
        func check(_ m: Manifest) throws -> ArchiveCheck { try ArchiveCheck.check(fileAt: path, size: m.size, sha256: m.sha256) }
        let m = try draft.signed(with: key)
        #expect(try check(m) == .matches)
        draft.size += 1
        #expect(
            try check(try draft.signed(with: key))
                == .sizeMismatch(expected: Int64(bytes.count) + 1, actual: Int64(bytes.count)))
        draft.size -= 1
        draft.sha256 = String(repeating: "0", count: 64)
        if case .hashMismatch(_, let actual) = try check(try draft.signed(with: key)) {
            #expect(actual == Digest.hex(.sha256, of: bytes))
        } else {
            Issue.record("expected a hash mismatch")
        }
    }
}

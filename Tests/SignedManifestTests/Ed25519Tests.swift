import ClientFoundation
import ClientUpdater
import Foundation
import ReleaseSigning
import SignedManifest
import TestSupport
import Testing

@Suite struct Ed25519Tests {
    @Test func signAndVerifyRoundTrip() throws {
        let key = try Ed25519.PrivateKey.generate()
        let message = Array("hello".utf8)
        let sig = try key.signature(for: message)
        #expect(sig.count == 64)
        #expect(key.publicKey.isValidSignature(sig, for: message))
        #expect(!key.publicKey.isValidSignature(sig, for: Array("hellO".utf8)))
        #expect(!key.publicKey.isValidSignature(Array(sig.dropLast()), for: message))
        #expect(!(try Ed25519.PrivateKey.generate()).publicKey.isValidSignature(sig, for: message))
        // Ed25519 is deterministic: the same message gives the same signature.
        #expect(try key.signature(for: message) == sig)
    }

    @Test func pemRoundTripKeepsTheKey() throws {
        let key = try Ed25519.PrivateKey.generate()
        let pem = try key.pemRepresentation()
        #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
        let again = try Ed25519.PrivateKey(pem: pem)
        #expect(again.publicKey == key.publicKey)
        let pub = try Ed25519.PublicKey(pem: key.publicKey.pemRepresentation)
        #expect(pub == key.publicKey)
        #expect(pub.keyId.count == 16)
        #expect(try Ed25519.PublicKey(rawRepresentation: pub.rawRepresentation) == pub)
    }

    @Test func badKeysAreReadableErrors() throws {
        let key = try Ed25519.PrivateKey.generate()
        let e1 = #expect(throws: SignedManifestError.self) { try Ed25519.PublicKey(pem: try key.pemRepresentation(), source: "k.pem") }
        #expect(e1?.code == .invalidKey)
        #expect(e1?.message.contains("k.pem is not a PEM public key") == true)
        #expect(e1?.message.contains("it is a private key") == true)
        let e2 = #expect(throws: SignedManifestError.self) { try Ed25519.PrivateKey(pem: "garbage", source: "g.pem") }
        #expect(e2?.message.hasPrefix("g.pem is not an unencrypted PEM private key (OpenSSL: ") == true)
        let e3 = #expect(throws: SignedManifestError.self) { try Ed25519.PublicKey(pemFile: "/nonexistent/key.pem") }
        #expect(e3?.code == .notFound)
        #expect(throws: SignedManifestError.self) { try Ed25519.PublicKey(rawRepresentation: [1, 2, 3]) }
    }

    // MARK: interop with the openssl command line

    @Test func opensslKeysLoadAndKeyIdMatchesOpenssl() throws {
        let dir = try TemporaryDirectory("ed25519")
        try run("openssl", ["genpkey", "-algorithm", "ed25519", "-out", dir("k.pem")])
        try run("openssl", ["pkey", "-in", dir("k.pem"), "-pubout", "-out", dir("k.pub.pem")])
        try run("openssl", ["pkey", "-pubin", "-in", dir("k.pub.pem"), "-outform", "DER", "-out", dir("k.der")])
        let key = try Ed25519.PrivateKey(pemFile: dir("k.pem"))
        let pub = try Ed25519.PublicKey(pemFile: dir("k.pub.pem"))
        #expect(key.publicKey == pub)
        let der = try Data(contentsOf: URL(fileURLWithPath: dir("k.der")))
        #expect(pub.derRepresentation == Array(der))
        #expect(pub.keyId == String(Digest.hex(.sha256, of: der).prefix(16)))
        // Our PEM output is what openssl writes.
        let opensslPub = try String(contentsOfFile: dir("k.pub.pem"), encoding: .utf8)
        #expect(pub.pemRepresentation == opensslPub)
    }

    @Test func opensslVerifiesOurSignatureAndWeVerifyOpenssls() throws {
        let dir = try TemporaryDirectory("ed25519")
        let key = try Ed25519.PrivateKey.generate()
        try Data(try key.pemRepresentation().utf8).write(to: URL(fileURLWithPath: dir("k.pem")))
        try Data(key.publicKey.pemRepresentation.utf8).write(to: URL(fileURLWithPath: dir("k.pub.pem")))
        let manifest = try ManifestSamples.draft().signed(with: key)
        try Data(manifest.signedBytes).write(to: URL(fileURLWithPath: dir("canonical")))
        try Data(manifest.signature).write(to: URL(fileURLWithPath: dir("sig")))

        let ok = try Subprocess.run(
            "openssl",
            [
                "pkeyutl", "-verify", "-pubin", "-inkey", dir("k.pub.pem"), "-rawin",
                "-in", dir("canonical"), "-sigfile", dir("sig"),
            ])
        #expect(ok.status == 0, "\(ok.errorOutput)")
        #expect(ok.output.contains("Signature Verified Successfully"))
        var tampered = manifest.signedBytes
        tampered[tampered.count / 2] ^= 1
        try Data(tampered).write(to: URL(fileURLWithPath: dir("tampered")))
        let bad = try Subprocess.run(
            "openssl",
            [
                "pkeyutl", "-verify", "-pubin", "-inkey", dir("k.pub.pem"), "-rawin",
                "-in", dir("tampered"), "-sigfile", dir("sig"),
            ])
        #expect(bad.status != 0)

        // openssl signs the canonical bytes; our verifier accepts the manifest.
        try run("openssl", ["pkeyutl", "-sign", "-inkey", dir("k.pem"), "-rawin", "-in", dir("canonical"), "-out", dir("sig2")])
        let sig2 = try Data(contentsOf: URL(fileURLWithPath: dir("sig2")))
        var object = manifest.object
        object["signature"] = .string(sig2.base64EncodedString())
        #expect(ManifestVerifier(trustedKeys: [key.publicKey]).verify(object).manifest != nil)
    }

    @discardableResult
    func run(_ tool: String, _ args: [String]) throws -> Subprocess.Result {
        let r = try Subprocess.run(tool, args)
        #expect(r.status == 0, "\(tool) \(args.joined(separator: " ")): \(r.errorOutput)")
        return r
    }
}

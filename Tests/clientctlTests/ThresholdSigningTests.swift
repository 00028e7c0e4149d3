import ClientFoundation
import ClientUpdater
import Foundation
import SignedManifest
import StrictJSON
import TestSupport
import Testing

/// The release side of trust roots, run as the built binary with keys made by `openssl`:
/// `root` commands, a release pending until its threshold is met, `sign`, and
/// `--sign-command` with a script that signs through `openssl pkeyutl` (the key never
/// passes through clientctl). Every signature verifies with `openssl pkeyutl -verify
/// -rawin` over `clientctl manifest canonical`.
@Suite struct ThresholdSigningTests {
    let dir: TemporaryDirectory
    let sample = ClientctlBinary.packagePath("Fixtures/sample-client")

    init() throws {
        dir = try TemporaryDirectory("threshold")
        try FileManager.default.createDirectory(atPath: dir("keys"), withIntermediateDirectories: true)
    }

    @discardableResult
    func run(_ tool: String, _ args: [String], expect status: Int32 = 0, sourceLocation: SourceLocation = #_sourceLocation) async throws
        -> Subprocess.Result
    {
        let r = tool == "clientctl" ? try await ClientctlBinary.run(args) : try await Subprocess.run(tool, args)
        #expect(r.status == status, "\(tool) \(args.joined(separator: " ")): \(r.errorOutput)", sourceLocation: sourceLocation)
        return r
    }

    /// An Ed25519 key pair made by openssl: `keys/NAME.pem`, `keys/NAME.pub.pem`; returns its key id.
    func key(_ name: String) async throws -> String {
        try await run("openssl", ["genpkey", "-algorithm", "ed25519", "-out", dir("keys/\(name).pem")])
        try await run("openssl", ["pkey", "-in", dir("keys/\(name).pem"), "-pubout", "-out", dir("keys/\(name).pub.pem")])
        let id = try Ed25519.PublicKey(pemFile: dir("keys/\(name).pub.pem")).keyId
        // The "HSM" of the sign-command tests finds its keys by id.
        try FileManager.default.createDirectory(atPath: dir("hsm"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: dir("keys/\(name).pem"), toPath: dir("hsm/\(id).pem"))
        return id
    }

    /// Root 1 of `stable` in the release folder: root key `root` (threshold 1), release
    /// keys r1 and r2 with threshold 2, built and signed with the `root` commands.
    func publishRoot() async throws {
        let file = dir("root-1.json")
        try await run(
            "clientctl",
            [
                "root", "init", file, "--app", "com.example.notes", "--channel", "stable", "--root-key", dir("keys/root.pub.pem"),
                "--release-key", dir("keys/r1.pub.pem"), "--release-key", dir("keys/r2.pub.pem"), "--release-threshold", "2",
                "--expires", "365d",
            ])
        try await run("clientctl", ["root", "sign", file, "--key", dir("keys/root.pem")])
        try FileManager.default.createDirectory(atPath: dir("rel/stable/root"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: file, toPath: dir("rel/stable/root/1.json"))
    }

    func publish(_ version: String, _ signing: [String], expect status: Int32 = 0) async throws -> Subprocess.Result {
        try await run(
            "clientctl",
            [
                "publish", sample, "--app", "com.example.notes", "--channel", "stable", "--version", version, "--min-shell", "1.0.0",
                "--out", dir("rel"),
            ] + signing, expect: status)
    }

    /// Each signature of `manifest` verifies with openssl over the canonical bytes.
    func expectOpenSSLVerifiesEverySignature(_ manifest: String, keys: [String: String]) async throws {
        let canonical = try await run("clientctl", ["manifest", "canonical", manifest])
        try canonical.stdout.write(to: URL(fileURLWithPath: dir("canonical")))
        let m = try Manifest.validateForTests(Data(contentsOf: URL(fileURLWithPath: manifest)))
        #expect(m.signatures.count == keys.count)
        for (n, signature) in m.signatures.enumerated() {
            try Data(signature.signature).write(to: URL(fileURLWithPath: dir("sig-\(n)")))
            let pub = try #require(keys[signature.keyId], "an unexpected signer \(signature.keyId)")
            let verified = try await run(
                "openssl", ["pkeyutl", "-verify", "-pubin", "-inkey", pub, "-rawin", "-in", dir("canonical"), "-sigfile", dir("sig-\(n)")])
            #expect(verified.output.contains("Signature Verified Successfully"))
        }
    }

    @Test func aReleaseWaitsUntilItsThresholdOfReleaseKeysSigned() async throws {
        _ = try await key("root")
        let r1 = try await key("r1")
        let r2 = try await key("r2")
        _ = try await key("stranger")
        try await publishRoot()
        let stranger = try await publish("1.0.0", ["--key", dir("keys/stranger.pem")], expect: 65)
        #expect(stranger.errorOutput.contains("is not a release key of trust root 1"))

        let first = try await publish("1.0.0", ["--key", dir("keys/r1.pem")])
        let pending = dir("rel/stable/pending/v1.0.0.json")
        #expect(first.output.contains("pending: com.example.notes 1.0.0 waits for 1 more release signature(s)"))
        #expect(first.output.contains("clientctl sign \(pending) --key KEY.pem"))
        #expect(!FileManager.default.fileExists(atPath: dir("rel/stable/manifest.json")), "devices see nothing yet")
        #expect(FileManager.default.fileExists(atPath: dir("rel/stable/v1.0.0.tar.gz")))

        let signed = try await run("clientctl", ["sign", pending, "--key", dir("keys/r2.pem")])
        #expect(signed.output.contains("published com.example.notes 1.0.0 on stable: the release threshold is met"))
        #expect(!FileManager.default.fileExists(atPath: pending))
        try await expectOpenSSLVerifiesEverySignature(
            dir("rel/stable/manifest.json"), keys: [r1: dir("keys/r1.pub.pem"), r2: dir("keys/r2.pub.pem")])
        let root = try TrustRoot.parse(Data(contentsOf: URL(fileURLWithPath: dir("rel/stable/root/1.json"))), source: "root")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: dir("rel/stable/manifest.json")))
        #expect(ManifestVerifier(root: root).verify(bytes: Array(bytes)).manifest?.version == Version(1, 0, 0))
        let verified = try await run("clientctl", ["root", "verify", dir("rel/stable")])
        #expect(verified.output.hasPrefix("root 1: root keys "))
    }

    /// `--sign-command`: a script signs through `openssl pkeyutl` with the key named by
    /// `CLIENTCTL_SIGN_KEY_ID`; broken commands are refused naming the command, nothing published.
    @Test func aSignCommandSignsWithKeysClientctlNeverReads() async throws {
        _ = try await key("root")
        let r1 = try await key("r1")
        let r2 = try await key("r2")
        try await publishRoot()
        func script(_ name: String, key: String) throws -> String {
            let body = """
                #!/bin/sh
                set -e
                msg=$(mktemp)
                cat > "$msg"
                openssl pkeyutl -sign -rawin -inkey \(key) -in "$msg"
                rm -f "$msg"
                """
            try Data(body.utf8).write(to: URL(fileURLWithPath: dir(name)))
            return "sh " + dir(name)
        }
        let hsm = try script("hsm.sh", key: "\"\(dir("hsm"))/$CLIENTCTL_SIGN_KEY_ID.pem\"")
        let wrongKey = try script("wrong.sh", key: dir("keys/root.pem"))
        let publics = ["--key", dir("keys/r1.pub.pem"), "--key", dir("keys/r2.pub.pem")]
        for (command, status, message) in [
            ("false", Int32(69), "sign command 'false' for key \(r1) failed (status 1)"),
            ("printf abcde", 65, "sign command 'printf abcde' for key \(r1) wrote 5 bytes; a raw Ed25519 signature is 64"),
            (wrongKey, 65, "for key \(r1) made a signature that does not verify with that key (another key?)"),
        ] {
            let refused = try await publish("1.0.0", publics + ["--sign-command", command], expect: status)
            #expect(refused.errorOutput.contains(message), "\(refused.errorOutput)")
            #expect(!FileManager.default.fileExists(atPath: dir("rel/stable/manifest.json")))
        }
        let published = try await publish("1.0.0", publics + ["--sign-command", hsm])
        #expect(published.output.hasPrefix("published com.example.notes 1.0.0 on stable"), "\(published.output)")
        try await expectOpenSSLVerifiesEverySignature(
            dir("rel/stable/manifest.json"), keys: [r1: dir("keys/r1.pub.pem"), r2: dir("keys/r2.pub.pem")])
    }

    /// Root edits keep every threshold meetable; a successor not vouched for by the old
    /// root keys is what `root verify` (like a device) refuses.
    @Test func rootEditsAndAChainThatDevicesWouldRefuse() async throws {
        _ = try await key("root")
        _ = try await key("root2")
        let r1 = try await key("r1")
        _ = try await key("r2")
        _ = try await key("r3")
        try await publishRoot()
        let next = dir("root-2.json")
        try await run("clientctl", ["root", "init", next, "--from", dir("rel/stable/root/1.json"), "--expires", "30d"])
        let tooHigh = try await run("clientctl", ["root", "set-threshold", next, "--role", "release", "3"], expect: 64)
        #expect(tooHigh.errorOutput.contains("threshold 3 for the release role: expected 1 to 2 (its keys)"))
        let below = try await run("clientctl", ["root", "remove-key", next, "--role", "release", "--key-id", r1], expect: 64)
        #expect(
            below.errorOutput.contains(
                "removing \(r1) leaves 1 release keys for a threshold of 2: add its replacement first, or lower the threshold first"))
        try await run("clientctl", ["root", "add-key", next, "--role", "release", "--key", dir("keys/r3.pub.pem")])
        let removed = try await run("clientctl", ["root", "remove-key", next, "--role", "release", "--key-id", r1])
        #expect(removed.output.contains("removed \(r1) from the release role (signatures dropped)"))
        try await run("clientctl", ["root", "sign", next, "--key", dir("keys/root2.pem")])
        try FileManager.default.copyItem(atPath: next, toPath: dir("rel/stable/root/2.json"))
        let refused = try await run("clientctl", ["root", "verify", dir("rel/stable")], expect: 65)
        #expect(refused.errorOutput.contains("signed by 0 of root 1's root keys, 1 needed"), "\(refused.errorOutput)")
        try await run("clientctl", ["root", "sign", dir("rel/stable/root/2.json"), "--key", dir("keys/root.pem")])
        let walked = try await run("clientctl", ["root", "verify", dir("rel/stable")])
        #expect(walked.output.split(separator: "\n").count == 2 && walked.output.contains("root 2: "))
    }
}

extension Manifest {
    /// A manifest file's fields, its signatures not checked (the test checks them with openssl).
    static func validateForTests(_ data: Data) throws -> Manifest {
        try Manifest.validate(try StrictJSON.parseObject(data, limits: .manifest)).get()
    }
}

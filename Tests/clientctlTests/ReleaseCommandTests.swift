import ClientFoundation
import ClientUpdater
import Foundation
import SignedManifest
import StrictJSON
import TestSupport
import Testing

/// keygen, publish, verify and manifest canonical, run as the built `clientctl` binary.
@Suite struct ReleaseCommandTests {
    let dir: TemporaryDirectory
    let sample = ClientctlBinary.packagePath("Fixtures/sample-client")

    init() throws {
        dir = try TemporaryDirectory("release-cli")
    }

    @discardableResult
    func clientctl(_ args: [String], expect status: Int32 = 0, sourceLocation: SourceLocation = #_sourceLocation) async throws -> Subprocess.Result {
        let r = try await ClientctlBinary.run(args)
        #expect(r.status == status, "clientctl \(args.joined(separator: " ")): \(r.errorOutput)", sourceLocation: sourceLocation)
        return r
    }

    @discardableResult
    func openssl(_ args: [String], expect status: Int32 = 0) async throws -> Subprocess.Result {
        let r = try await Subprocess.run("openssl", args)
        #expect(r.status == status, "openssl \(args.joined(separator: " ")): \(r.errorOutput)")
        return r
    }

    @discardableResult
    func publish(
        _ version: String, key: String, out: String? = nil, source: String? = nil, extra: [String] = [],
        expect status: Int32 = 0
    ) async throws -> Subprocess.Result {
        try await clientctl(
            [
                "publish", source ?? sample, "--app", "com.example.notes", "--channel", "stable", "--version", version,
                "--min-shell", "1.0.0", "--key", key, "--out", out ?? dir("rel"),
            ] + extra, expect: status)
    }

    @Test func keygenWritesAPrivate0600KeyAndRefusesToOverwrite() async throws {
        let r = try await clientctl(["keygen", "--out", dir("release")])
        let keyId = r.output.trimmingCharacters(in: .whitespacesAndNewlines)
        var st = stat()
        #expect(stat(dir("release.pem"), &st) == 0)
        #expect(st.st_mode & 0o777 == 0o600)
        #expect(stat(dir("release.pub.pem"), &st) == 0)
        #expect(st.st_mode & 0o777 == 0o644)
        // The printed keyId is SHA-256 over the DER public key, as openssl computes it.
        try await openssl(["pkey", "-pubin", "-in", dir("release.pub.pem"), "-outform", "DER", "-out", dir("pub.der")])
        let der = try Data(contentsOf: URL(fileURLWithPath: dir("pub.der")))
        #expect(keyId == String(Digest.hex(.sha256, of: der).prefix(16)))
        // openssl reads the private key and derives the same public key.
        await #expect(
            try openssl(["pkey", "-in", dir("release.pem"), "-pubout"]).output
                == (try String(contentsOfFile: dir("release.pub.pem"), encoding: .utf8)))

        let before = try Data(contentsOf: URL(fileURLWithPath: dir("release.pem")))
        let again = try await clientctl(["keygen", "--out", dir("release")], expect: 73)
        #expect(again.errorOutput == "clientctl: \(dir("release.pem")) exists already; keygen never overwrites a key (choose another --out)\n")
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir("release.pem"))) == before)
        let json = try await clientctl(["keygen", "--out", dir("other"), "--json"])
        #expect(try StrictJSON.parseObject(json.stdout)["keyId"]?.stringValue?.count == 16)
    }

    /// openssl genpkey keys work in publish; openssl verifies what clientctl signed
    /// (`manifest canonical` + `pkeyutl -verify -rawin`); a signature made by openssl
    /// verifies in `clientctl verify`.
    @Test func opensslInteropBothWays() async throws {
        try await openssl(["genpkey", "-algorithm", "ed25519", "-out", dir("k.pem")])
        try await openssl(["pkey", "-in", dir("k.pem"), "-pubout", "-out", dir("k.pub.pem")])
        try await publish("1.0.0", key: dir("k.pem"))
        let manifestPath = dir("rel/stable/manifest.json")
        try await clientctl(["verify", manifestPath, "--trust", dir("k.pub.pem"), "--archive", dir("rel/stable/v1.0.0.tar.gz")])

        let canonical = try await clientctl(["manifest", "canonical", manifestPath]).stdout
        try canonical.write(to: URL(fileURLWithPath: dir("canonical")))
        let object = try StrictJSON.parseObject(try Data(contentsOf: URL(fileURLWithPath: manifestPath)))
        #expect(Array(canonical) == Manifest.signedBytes(of: object))
        let signature = try #require(object["signature"]?.stringValue.flatMap { Data(base64Encoded: $0) })
        try signature.write(to: URL(fileURLWithPath: dir("sig")))
        let verified = try await openssl([
            "pkeyutl", "-verify", "-pubin", "-inkey", dir("k.pub.pem"), "-rawin",
            "-in", dir("canonical"), "-sigfile", dir("sig"),
        ])
        #expect(verified.output.contains("Signature Verified Successfully"))

        try await openssl(["pkeyutl", "-sign", "-inkey", dir("k.pem"), "-rawin", "-in", dir("canonical"), "-out", dir("sig2")])
        var resigned = object
        resigned["signature"] = .string(try Data(contentsOf: URL(fileURLWithPath: dir("sig2"))).base64EncodedString())
        try Data(JSONPrettyPrinter.render(.object(resigned))).write(to: URL(fileURLWithPath: dir("resigned.json")))
        let ok = try await clientctl(["verify", dir("resigned.json"), "--trust", dir("k.pub.pem")])
        #expect(ok.output.hasPrefix("valid: com.example.notes stable 1.0.0"))
    }

    @Test func verifyReportsWhyAndExits65() async throws {
        try await clientctl(["keygen", "--out", dir("k")])
        try await clientctl(["keygen", "--out", dir("other")])
        try await publish("1.0.0", key: dir("k.pem"))
        let manifestPath = dir("rel/stable/manifest.json")
        let text = try String(contentsOfFile: manifestPath, encoding: .utf8)

        try text.replacingOccurrences(of: "\"version\": \"1.0.0\"", with: "\"version\": \"1.0.1\"")
            .write(toFile: dir("tampered.json"), atomically: true, encoding: .utf8)
        let tampered = try await clientctl(["verify", dir("tampered.json"), "--trust", dir("k.pub.pem")], expect: 65)
        #expect(tampered.errorOutput.contains("signature does not verify"))

        let untrusted = try await clientctl(["verify", manifestPath, "--trust", dir("other.pub.pem")], expect: 65)
        #expect(untrusted.errorOutput.contains("which is not trusted"))
        // Several --trust keys: the one named by keyId is used.
        try await clientctl(["verify", manifestPath, "--trust", dir("other.pub.pem"), "--trust", dir("k.pub.pem")])

        try text.replacingOccurrences(of: "{", with: "{\"app\": \"x\",").write(toFile: dir("dup.json"), atomically: true, encoding: .utf8)
        let dup = try await clientctl(["verify", dir("dup.json"), "--trust", dir("k.pub.pem")], expect: 65)
        #expect(dup.errorOutput.contains("duplicate key \"app\""))

        try Data("not an archive".utf8).write(to: URL(fileURLWithPath: dir("wrong.tar.gz")))
        let wrong = try await clientctl(["verify", manifestPath, "--trust", dir("k.pub.pem"), "--archive", dir("wrong.tar.gz")], expect: 65)
        #expect(wrong.errorOutput.contains("the manifest says"))

        let json = try await clientctl(["verify", dir("tampered.json"), "--trust", dir("k.pub.pem"), "--json"], expect: 65)
        let o = try StrictJSON.parseObject(json.stdout)
        #expect(o["valid"] == .bool(false))
        #expect(o["reason"] == .string("badSignature"))

        try await clientctl(["verify", dir("missing.json"), "--trust", dir("k.pub.pem")], expect: 66)
        try await clientctl(["verify", manifestPath, "--trust", dir("missing.pub.pem")], expect: 66)
        try await clientctl(["verify", manifestPath], expect: 64)
    }

    /// Zip entries store local DOS times: publish runs in UTC, so machines in different
    /// time zones publish the same bytes. The manifests differ only in published/signature.
    @Test(arguments: ["zip", "tar.gz", "tar.zst"])
    func publishIsReproducibleAcrossTimeZones(format: String) async throws {
        try await clientctl(["keygen", "--out", dir("k")])
        var manifests: [JSONObject] = []
        for (out, zone) in [("relA", "Asia/Tokyo"), ("relB", "America/New_York")] {
            let r = try await ClientctlBinary.run(
                [
                    "publish", sample, "--app", "com.example.notes", "--channel", "stable",
                    "--version", "1.0.0", "--min-shell", "1.0.0", "--key", dir("k.pem"),
                    "--out", dir(out), "--format", format,
                ], environment: ["TZ": zone])
            #expect(r.status == 0, "\(r.errorOutput)")
            manifests.append(try StrictJSON.parseObject(try Data(contentsOf: URL(fileURLWithPath: dir("\(out)/stable/manifest.json")))))
            if manifests.count == 1 {  // the second publish runs in a later second: its `published` differs
                let first = try #require(manifests[0]["published"]?.stringValue.flatMap(RFC3339.parse))
                try await Poll.until("the clock to pass the first publish's second") { Date().timeIntervalSince(first) >= 1 }
            }
        }
        let a = try Data(contentsOf: URL(fileURLWithPath: dir("relA/stable/v1.0.0.\(format)")))
        let b = try Data(contentsOf: URL(fileURLWithPath: dir("relB/stable/v1.0.0.\(format)")))
        #expect(a == b)
        let differing = Set(manifests[0].keys).filter { manifests[0][$0] != manifests[1][$0] }
        #expect(differing == ["published", "signature"])
    }

    @Test func verifyChecksEveryEntryOfAnIndex() async throws {
        try await clientctl(["keygen", "--out", dir("k")])
        try await publish("1.0.0", key: dir("k.pem"))
        try await publish("1.1.0", key: dir("k.pem"))
        let indexPath = dir("rel/stable/index.json")
        let ok = try await clientctl(["verify", indexPath, "--trust", dir("k.pub.pem")])
        #expect(ok.output.split(separator: "\n").count == 2)
        var index = try ReleaseIndex.parse(try Data(contentsOf: URL(fileURLWithPath: indexPath)))
        index.releases[1]["minShellVersion"] = .string("0.1.0")
        try Data(index.jsonBytes()).write(to: URL(fileURLWithPath: dir("bad-index.json")))
        let bad = try await clientctl(["verify", dir("bad-index.json"), "--trust", dir("k.pub.pem")], expect: 65)
        #expect(bad.output.contains("INVALID: 1.0.0: signature does not verify"))
        #expect(bad.errorOutput.contains("1 of 2 releases invalid"))
    }

    @Test func publishRefusalsAndExitCodes() async throws {
        try await clientctl(["keygen", "--out", dir("k")])
        await #expect(try publish("1.0.0", key: dir("k.pem")).output.hasPrefix("published com.example.notes 1.0.0 on stable"))
        await #expect(try publish("1.0.0", key: dir("k.pem")).output.hasPrefix("unchanged: "))
        try FileManager.default.copyItem(atPath: sample, toPath: dir("src"))
        try Data("changed".utf8).write(to: URL(fileURLWithPath: dir("src/app.js")))
        await #expect(try publish("1.0.0", key: dir("k.pem"), source: dir("src"), expect: 65).errorOutput.contains("other contents"))
        await #expect(try publish("0.9.0", key: dir("k.pem"), expect: 65).errorOutput.contains("is not above 1.0.0"))
        try FileManager.default.removeItem(atPath: dir("src/index.html"))
        await #expect(try publish("2.0.0", key: dir("k.pem"), source: dir("src"), expect: 65).errorOutput.contains("has no index.html"))
        try await publish("2.0.0", key: dir("k.pem"), source: dir("nowhere"), expect: 66)
        try await publish("2.0.0", key: dir("missing.pem"), expect: 66)
        try await publish("2.0.0", key: dir("k.pub.pem"), expect: 65)
        await #expect(try publish("v2.0.0", key: dir("k.pem"), expect: 64).errorOutput.contains("is invalid for '--version <SEMVER>'"))
        try await publish("2.0.0", key: dir("k.pem"), extra: ["--format", "rar"], expect: 64)
        try await publish("2.0.0", key: dir("k.pem"), extra: ["--expires", "soon"], expect: 64)
        let json = try await publish("2.0.0", key: dir("k.pem"), extra: ["--format", "zip", "--expires", "7d", "--json"])
        let o = try StrictJSON.parseObject(json.stdout)
        #expect(o["archive"] == .string(dir("rel/stable/v2.0.0.zip")))
        #expect(o["unchanged"] == .bool(false))
    }

    /// A file the publishing user cannot read is refused by path. Root reads every file,
    /// so as root this runs clientctl as `nobody` (setpriv, util-linux).
    @Test func unreadableFilesAreRefusedByPath() async throws {
        try await clientctl(["keygen", "--out", dir("k")])
        try FileManager.default.copyItem(atPath: sample, toPath: dir("src"))
        chmod(dir("src/assets/fonts/fonts.css"), 0o000)
        chmod(dir.path, 0o755)
        chmod(dir("k.pem"), 0o644)
        try FileManager.default.createDirectory(atPath: dir("rel"), withIntermediateDirectories: true)
        chmod(dir("rel"), 0o777)
        let args = [
            "publish", dir("src"), "--app", "a.b", "--channel", "stable", "--version", "1.0.0",
            "--min-shell", "1.0.0", "--key", dir("k.pem"), "--out", dir("rel"),
        ]
        let r = try await Self.runUnprivileged(args)
        #expect(r.status == 65, "\(r.errorOutput)")
        #expect(r.errorOutput == "clientctl: \(dir("src/assets/fonts/fonts.css")): unreadable file: Permission denied\n")
        #expect(!FileManager.default.fileExists(atPath: dir("rel/stable/v1.0.0.tar.gz")))
    }

    /// Runs clientctl as `nobody` when this process is root (as this user otherwise).
    /// - Throws: ``HarnessError`` when setpriv is missing or `nobody` cannot run clientctl.
    static func runUnprivileged(_ args: [String]) async throws -> Subprocess.Result {
        guard getuid() == 0 else { return try await ClientctlBinary.run(args) }
        guard Subprocess.isAvailable("setpriv") else { throw HarnessError("setpriv is missing (util-linux, part of every Debian)") }
        let asNobody = ["--reuid=65534", "--regid=65534", "--clear-groups", ClientctlBinary.path]
        let probe = try await Subprocess.run("setpriv", asNobody + ["--version"])
        guard probe.status == 0 else {
            throw HarnessError("nobody cannot run \(ClientctlBinary.path) (a folder on its path is not world-searchable?): \(probe.errorOutput)")
        }
        return try await Subprocess.run("setpriv", asNobody + args)
    }

    @Test(arguments: [["keygen"], ["publish"], ["verify"], ["manifest", "canonical"]])
    func everyHelpHasExamples(command: [String]) async throws {
        let r = try await clientctl(command + ["--help"])
        #expect(r.output.contains("Examples:"))
        #expect(r.output.contains("clientctl \(command.joined(separator: " "))"))
    }

    @Test func canonicalRefusesMalformedJSON() async throws {
        try Data(#"{"a": 1} trailing"#.utf8).write(to: URL(fileURLWithPath: dir("m.json")))
        let r = try await clientctl(["manifest", "canonical", dir("m.json")], expect: 65)
        #expect(r.errorOutput.contains("trailing data"))
        #expect(r.stdout.isEmpty)
        try await clientctl(["manifest", "canonical", dir("none.json")], expect: 66)
    }

    /// publish prints what an update to the new release costs a device coming from each
    /// older release, and the same as JSON; --delta-bases 0 writes no delta at all.
    @Test func publishPrintsTheCostOfEachDeltaPath() async throws {
        let key = ClientctlBinary.packagePath("Keys/test-signing.pem")
        try await publish("1.0.0", key: key)
        let source = dir("src-1.1.0")
        try FileManager.default.copyItem(atPath: sample, toPath: source)
        try Data(String(repeating: "export const answer = 42;\n", count: 400).utf8).write(to: URL(fileURLWithPath: source + "/added.js"))
        let text = try await publish("1.1.0", key: key, source: source).output
        let manifest = try Manifest.validate(try StrictJSON.parseObject(try Data(contentsOf: URL(fileURLWithPath: dir("rel/stable/manifest.json")))))
            .get()
        let delta = try #require(manifest.delta).get()
        let files = try #require(delta.files)
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.count == 3, "\(text)")
        #expect(
            lines.dropFirst().first
                == "  from any older release: file list of \(files.size) bytes for \(files.count) files, plus the files a device does not hold")
        let patch = try #require(delta.patches.first)
        let share = String(format: "%.1f", 100 * Double(patch.size) / Double(manifest.size))
        #expect(lines.last == "  from 1.0.0: patch of \(patch.size) bytes (\(share) % of the archive)", "\(text)")

        let json = try await publish("1.2.0", key: key, source: source, extra: ["--json"]).stdout
        let object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        let costs = try #require(object["delta"] as? [[String: Any]])
        #expect(costs.map { $0["from"] as? String } == ["1.1.0", "1.0.0"])
        #expect(costs.allSatisfy { $0["patch"] as? Bool == true && ($0["bytes"] as? Int ?? 0) > 0 }, "\(costs)")

        try await publish("1.3.0", key: key, source: source, extra: ["--delta-bases", "0"])
        let plain = try Manifest.validate(try StrictJSON.parseObject(try Data(contentsOf: URL(fileURLWithPath: dir("rel/stable/manifest.json")))))
            .get()
        #expect(plain.delta == nil)
    }
}

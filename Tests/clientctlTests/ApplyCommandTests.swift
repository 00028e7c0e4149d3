import ApplyPolicy
import ClientFoundation
import ClientUpdater
import DeviceSetup
import Foundation
import SignedManifest
import StrictJSON
import TestSupport
import Testing

/// Apply policies from the command line (docs/apply-policies.md), run as the built binary:
/// `publish --apply`, `rollout set --apply` sign the policy into the manifest; `init
/// --apply-window --timezone` writes the device's windows; every malformed value is refused
/// with one line and exit 64, nothing written; `status` names what a staged version waits for.
@Suite struct ApplyCommandTests {
    let dir: TemporaryDirectory
    let sample = ClientctlBinary.packagePath("Fixtures/sample-client")
    let key = ClientctlBinary.packagePath("Keys/test-signing.pem")

    init() throws {
        dir = try TemporaryDirectory("apply-cli")
    }

    @discardableResult
    func clientctl(
        _ args: [String], expect status: Int32 = 0, environment: [String: String] = [:], sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Subprocess.Result {
        let r = try await ClientctlBinary.run(args, environment: environment)
        #expect(r.status == status, "clientctl \(args.joined(separator: " ")): \(r.errorOutput)", sourceLocation: sourceLocation)
        return r
    }

    @discardableResult
    func publish(_ version: String, _ extra: [String] = [], expect status: Int32 = 0) async throws -> Subprocess.Result {
        try await clientctl(
            [
                "publish", sample, "--app", "com.example.notes", "--channel", "stable", "--version", version, "--min-shell", "1.0.0",
                "--key", key, "--out", dir("rel"),
            ] + extra, expect: status)
    }

    func manifest() throws -> Manifest {
        let data = try Data(contentsOf: URL(fileURLWithPath: dir("rel") + "/stable/manifest.json"))
        return try ManifestVerifier(trustedKeys: [try ReleaseFolder.testKey().publicKey]).verify(bytes: Array(data)).get()
    }

    @Test func publishSignsThePolicyIntoTheManifest() async throws {
        try await publish("1.0.0", ["--apply", "window", "--deadline", "48h", "--grace", "2h"])
        let m = try manifest()
        let apply = try #require(m.apply)
        #expect(apply.mode == .window && apply.graceSeconds == 7_200 && apply.idleSeconds == nil)
        #expect(apply.deadline == m.published.addingTimeInterval(48 * 3_600), "48h after the release")
        // What a device reads is what was signed: the member, as text.
        let member = try #require(m.object["apply"]?.objectValue)
        #expect(member["mode"] == .string("window") && member["graceSeconds"] == .integer(7_200))
        // A release without --apply carries none (next-start).
        try await publish("1.1.0")
        #expect(try manifest().apply == nil)
    }

    @Test func malformedPoliciesAreRefusedWithOneLineAndNothingWritten() async throws {
        try await publish("1.0.0")
        let before = try TreeSnapshot(dir("rel"))
        let cases: [([String], String)] = [
            (["--apply", "soon"], "'soon'"),
            (["--apply", "idle"], "needs idle seconds"),
            (["--apply", "idle", "--idle-seconds", "0"], "out of range"),
            (["--apply", "now", "--deadline", "2020-01-01T00:00:00Z"], "is not after the release time"),
            (["--apply", "now", "--deadline", "2027-01-01T00:00:00"], "apply deadline"),
            (["--apply", "now", "--deadline", "soonish"], "apply deadline"),
            (["--apply", "window", "--deadline", "1d", "--grace", "8d"], "longer than 7d"),
            (["--deadline", "48h"], "go with --apply MODE"),
        ]
        for (extra, says) in cases {
            let r = try await publish("1.1.0", extra, expect: 64)
            let lines = r.errorOutput.split(separator: "\n")
            #expect(lines.count == 1 && r.errorOutput.contains(says), "\(extra): \(r.errorOutput)")
        }
        #expect(try TreeSnapshot(dir("rel")) == before, "a refused policy writes nothing")
    }

    @Test func rolloutSetChangesThePolicyOfThePublishedRelease() async throws {
        try await publish("1.0.0", ["--rollout", "10"])
        let first = try manifest()
        let r = try await clientctl(
            ["rollout", "set", "stable", "--apply", "idle", "--idle-seconds", "300", "--deadline", "24h", "--out", dir("rel"), "--key", key])
        #expect(r.output.contains("apply idle 300 s, deadline"), "\(r.output)")
        let m = try manifest()
        #expect(m.apply?.mode == .idle && m.apply?.idleSeconds == 300 && m.published > first.published)
        #expect(m.rollout == first.rollout, "the rollout is left as it was")
        // Other edits keep the policy.
        try await clientctl(["rollout", "pause", "stable", "--out", dir("rel"), "--key", key])
        #expect(try manifest().apply == m.apply)
        let before = try TreeSnapshot(dir("rel"))
        let bad = try await clientctl(["rollout", "set", "stable", "--apply", "later", "--out", dir("rel"), "--key", key], expect: 64)
        #expect(bad.errorOutput.contains("'later'"))
        #expect(try TreeSnapshot(dir("rel")) == before)
    }

    func initArgs(_ root: String, _ extra: [String]) -> [String] {
        [
            "init", "--root", root, "--app", "com.example.notes", "--channel", "stable",
            "--manifest-url", "file://" + dir("rel") + "/stable/manifest.json",
            "--trust", ClientctlBinary.packagePath("Keys/test-signing.pub.pem"), "--shell-version", "1.0.0",
        ] + extra
    }

    @Test func initWritesTheWindowsAndRefusesWhatCannotBeRead() async throws {
        let root = dir("device")
        try await clientctl(
            initArgs(root, ["--apply-window", "02:00-04:00", "--apply-window", "22:30-23:00@America/New_York", "--timezone", "Europe/Berlin"]))
        let config = try DeviceConfig.load(RootLayout(root: root))
        #expect(config.applyWindows == ["02:00-04:00", "22:30-23:00@America/New_York"] && config.applyTimeZone == "Europe/Berlin")
        let cases: [([String], String)] = [
            (["--apply-window", "25:00-26:00"], "apply window"),
            (["--apply-window", "02:00-02:00"], "apply window"),
            (["--apply-window", "2-4"], "apply window"),
            (["--apply-window", "02:00-04:00", "--timezone", "Mars/Olympus"], "Mars/Olympus"),
            (["--apply-window", "02:00-04:00", "--timezone", "CET"], "CET"),
            (["--timezone", "Europe/Berlin"], "--timezone goes with --apply-window"),
        ]
        for (extra, says) in cases {
            let other = dir("refused-\(UUID().uuidString)")
            let r = try await clientctl(initArgs(other, extra), expect: 64)
            #expect(r.errorOutput.contains(says), "\(extra): \(r.errorOutput)")
            #expect(!FileManager.default.fileExists(atPath: other), "\(extra): nothing written")
        }
        // Without --timezone the device's own zone reads the window; one that cannot is refused.
        let local = dir("local")
        try await clientctl(initArgs(local, ["--apply-window", "02:00-04:00"]), environment: ["TZ": "Asia/Tokyo"])
        let refused = try await clientctl(initArgs(dir("no-zone"), ["--apply-window", "02:00-04:00"]), expect: 64, environment: ["TZ": "EST5EDT"])
        #expect(refused.errorOutput.contains("pass --timezone"), "\(refused.errorOutput)")
    }

    @Test func statusSaysWhatAStagedVersionWaitsFor() async throws {
        try await publish("1.0.0", ["--apply", "window", "--deadline", "2d"])
        let root = dir("device")
        try await clientctl(initArgs(root, ["--apply-window", "02:00-04:00", "--timezone", "Europe/Berlin"]))
        try await clientctl(["install", "--root", root])
        let status = try await clientctl(["status", "--root", root])
        let line = try #require(status.output.split(separator: "\n").first { $0.hasPrefix("takes over:") }, "\(status.output)")
        #expect(line.contains("1.0.0 staged since") && line.contains("apply window, deadline"), "\(line)")
        #expect(line.contains("no running host has decided yet"), "\(line)")
        let explained = try await clientctl(["status", "--root", root, "--explain"])
        #expect(explained.output.contains("takes over: 1.0.0 staged"), "\(explained.output)")
        let json = try await clientctl(["status", "--root", root, "--json"])
        let object = try StrictJSON.parseObject(json.stdout, source: "status")
        #expect(object["apply"]?.stringValue?.contains("1.0.0 staged") == true)
    }
}

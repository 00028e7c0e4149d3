import ClientUpdater
import ClientUpdaterHTTP
import Foundation
import SignedManifest
import StrictJSON
import TestSupport
import Testing

/// `clientctl push` against a real S3 server (SeaweedFS on 127.0.0.1, see ``SeaweedS3``),
/// and devices installing from it. What is checked is what S3 itself guarantees to a
/// writer: `If-None-Match: *` and `If-Match` on PUT answer `412 Precondition Failed` when
/// the condition fails (Amazon S3 User Guide, "Add preconditions to S3 operations with
/// conditional requests"; SeaweedFS implements both), and GET honours `If-None-Match`
/// (`304`) and `Range` (`206`).
@Suite struct S3PushTests {
    let dir: TemporaryDirectory
    let sample = ClientctlBinary.packagePath("Fixtures/sample-client")
    let key = ClientctlBinary.packagePath("Keys/test-signing.pem")
    let publicKey = ClientctlBinary.packagePath("Keys/test-signing.pub.pem")

    init() throws { dir = try TemporaryDirectory("s3-push") }

    @discardableResult
    func clientctl(
        _ args: [String], environment: [String: String] = [:], expect status: Int32 = 0, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Subprocess.Result {
        let r = try await ClientctlBinary.run(args, environment: environment)
        #expect(r.status == status, "clientctl \(args.joined(separator: " ")): \(r.errorOutput)", sourceLocation: sourceLocation)
        return r
    }

    func publish(_ version: String, from source: String? = nil, into folder: String) async throws {
        try await clientctl([
            "publish", source ?? sample, "--app", "com.example.notes", "--channel", "stable", "--version", version, "--min-shell", "1.0.0",
            "--key", key, "--out", folder,
        ])
    }

    @discardableResult
    func push(_ folder: String, _ s3: SeaweedS3, bucket: String, _ extra: [String] = [], expect status: Int32 = 0) async throws -> Subprocess.Result {
        try await clientctl(["push", folder, "s3://\(bucket)/notes", "--endpoint", s3.endpoint] + extra, environment: s3.environment, expect: status)
    }

    func remoteIndexVersions(_ s3: SeaweedS3, bucket: String) async throws -> [String] {
        let got = try await s3.get("\(bucket)/notes/stable/index.json")
        guard got.status == 200 else { return [] }
        return try ReleaseIndex.parse(got.body).releases.compactMap { $0["version"]?.stringValue }
    }

    /// A first push, a no-op push, cache headers as documented, and a device that installs
    /// from the bucket, revalidates with a 304 and takes the next release.
    @Test func aPushedChannelInstallsOnDevicesAndAPushAgainChangesNothing() async throws {
        let s3 = try await SeaweedS3.shared()
        let bucket = s3.freshArea("first")
        try await publish("1.0.0", into: dir("rel"))
        let first = try await push(dir("rel"), s3, bucket: bucket)
        // The archive, the file list and one object per distinct file content.
        let objects = try FileManager.default.contentsOfDirectory(atPath: dir("rel") + "/stable/objects")
        let uploaded = objects.count + 2
        #expect(
            first.output.contains(
                "pushed stable to s3://\(bucket)/notes/stable: \(uploaded) object(s) uploaded, 0 already there; new: 1.0.0; current 1.0.0"),
            "\(first.output)")
        let object = try await s3.head("\(bucket)/notes/stable/objects/\(try #require(objects.first))")
        #expect(object.status == 200 && object.headers["cache-control"] == "public, max-age=31536000, immutable")

        let archive = try await s3.head("\(bucket)/notes/stable/v1.0.0.tar.gz")
        #expect(archive.status == 200 && archive.headers["cache-control"] == "public, max-age=31536000, immutable")
        #expect(archive.headers["content-type"] == "application/gzip")
        for pointer in ["manifest.json", "index.json"] {
            let head = try await s3.head("\(bucket)/notes/stable/\(pointer)")
            #expect(head.status == 200 && head.headers["cache-control"] == "public, max-age=60", "\(pointer): \(head.headers)")
        }
        let local = try Data(contentsOf: URL(fileURLWithPath: dir("rel") + "/stable/manifest.json"))
        #expect(try await s3.get("\(bucket)/notes/stable/manifest.json").body == local, "the manifest is pushed as publish wrote it")

        let again = try await push(dir("rel"), s3, bucket: bucket, ["--max-age", "30"])
        #expect(again.output.contains("unchanged: s3://\(bucket)/notes/stable already holds every release of this folder (current 1.0.0)"))
        #expect(try await s3.head("\(bucket)/notes/stable/manifest.json").headers["cache-control"] == "public, max-age=60", "a no-op writes nothing")

        let manifestURL = "\(s3.endpoint)/\(bucket)/notes/stable/manifest.json"
        try await clientctl([
            "init", "--root", dir("device"), "--app", "com.example.notes", "--channel", "stable", "--manifest-url", manifestURL,
            "--trust", publicKey, "--shell-version", "1.0.0",
        ])
        #expect(try await clientctl(["install", "--root", dir("device")]).output == "installed 1.0.0\n")
        #expect(try await clientctl(["install", "--root", dir("device")]).output.contains("manifest not modified since the last check"))

        // The next release from a folder that holds only it: merged, nothing lost.
        try await publish("1.1.0", into: dir("rel-next"))
        let next = try await push(dir("rel-next"), s3, bucket: bucket)
        #expect(next.output.contains("new: 1.1.0; current 1.1.0"))
        #expect(try await remoteIndexVersions(s3, bucket: bucket) == ["1.1.0", "1.0.0"])
        #expect(try await clientctl(["install", "--root", dir("device")]).output == "installed 1.1.0\n")
    }

    /// The rollout role's restriction.json is pushed after the pointers with their cache
    /// lifetime, and devices reading the store are held by it; once the release role
    /// re-signs the manifest, the folder's restriction (bound to the old manifest) is not
    /// pushed again and the one in the store no longer holds.
    @Test func aRestrictionIsPushedAndHoldsDevicesUntilANewManifest() async throws {
        let s3 = try await SeaweedS3.shared()
        let bucket = s3.freshArea("restrict")
        try FileManager.default.createDirectory(atPath: dir("rel/stable/root"), withIntermediateDirectories: true)
        try await clientctl(["keygen", "--out", dir("guard")])
        try await clientctl([
            "root", "init", dir("root-1.json"), "--app", "com.example.notes", "--channel", "stable", "--root-key", publicKey,
            "--release-key", publicKey, "--rollout-key", dir("guard.pub.pem"), "--expires", "365d",
        ])
        try await clientctl(["root", "sign", dir("root-1.json"), "--key", key])
        try FileManager.default.copyItem(atPath: dir("root-1.json"), toPath: dir("rel/stable/root/1.json"))
        try await publish("1.0.0", into: dir("rel"))
        try await clientctl(["rollout", "restrict", "stable", "--out", dir("rel"), "--key", dir("guard.pem"), "--pause"])
        let pushed = try await push(dir("rel"), s3, bucket: bucket)
        #expect(pushed.output.contains("new: 1.0.0"), "\(pushed.output)")
        let head = try await s3.head("\(bucket)/notes/stable/restriction.json")
        #expect(head.status == 200 && head.headers["cache-control"] == "public, max-age=60", "\(head.headers)")
        let local = try Data(contentsOf: URL(fileURLWithPath: dir("rel") + "/stable/restriction.json"))
        #expect(try await s3.get("\(bucket)/notes/stable/restriction.json").body == local)

        try await clientctl([
            "init", "--root", dir("device"), "--app", "com.example.notes", "--channel", "stable", "--manifest-url",
            "\(s3.endpoint)/\(bucket)/notes/stable/manifest.json", "--trust-root", dir("rel/stable/root/1.json"), "--shell-version", "1.0.0",
        ])
        let held = try await clientctl(["install", "--root", dir("device")])
        #expect(held.output.contains("the rollout of release 1.0.0 is paused by the rollout role's restriction until"), "\(held.output)")

        try await clientctl(["rollout", "set", "stable", "--percent", "100", "--out", dir("rel"), "--key", key, "--lift-halt"])
        try await push(dir("rel"), s3, bucket: bucket)
        #expect(try await s3.get("\(bucket)/notes/stable/restriction.json").body == local, "a superseded restriction is not pushed")
        #expect(try await clientctl(["install", "--root", dir("device")]).output == "installed 1.0.0\n")
    }

    /// A cohort's copy goes to the store under its digest with the other immutable files
    /// (the release side's own list does not), and a device in the cohort reads it there
    /// and installs; one outside it keeps what it runs.
    @Test func aCohortCopyIsPushedAndDevicesAnswerFromTheStore() async throws {
        let s3 = try await SeaweedS3.shared()
        let bucket = s3.freshArea("cohort")
        let manifestURL = "\(s3.endpoint)/\(bucket)/notes/stable/manifest.json"
        var ids: [String: String] = [:]
        for name in ["in", "out"] {
            try await clientctl([
                "init", "--root", dir(name), "--app", "com.example.notes", "--channel", "stable", "--manifest-url", manifestURL,
                "--trust", publicKey, "--shell-version", "1.0.0",
            ])
            let id = try String(contentsOfFile: dir(name) + "/device-id", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            ids[name] = id
        }
        try Data("\(ids["in"] ?? "")\n".utf8).write(to: URL(fileURLWithPath: dir("pilot.txt")))
        try FileManager.default.createDirectory(atPath: dir("rel"), withIntermediateDirectories: true)
        try await clientctl(["cohort", "set", "stable", "pilot", "--ids", dir("pilot.txt"), "--out", dir("rel"), "--key", key])
        try await clientctl([
            "publish", sample, "--app", "com.example.notes", "--channel", "stable", "--version", "1.0.0", "--min-shell", "1.0.0",
            "--key", key, "--out", dir("rel"), "--target", "id in cohort pilot",
        ])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: dir("rel/stable/manifest.json")))
        let manifest = try ManifestVerifier(trustedKeys: [try ReleaseFolder.testKey().publicKey]).verify(bytes: Array(bytes)).get()
        let cohort = try #require(manifest.cohort(named: "pilot"))
        try await push(dir("rel"), s3, bucket: bucket)
        let copy = try await s3.head("\(bucket)/notes/stable/\(cohort.path)")
        #expect(copy.status == 200 && copy.headers["cache-control"] == "public, max-age=31536000, immutable", "\(copy.headers)")
        #expect(try await s3.head("\(bucket)/notes/stable/cohorts/pilot.txt").status == 404, "the release side's list stays home")
        #expect(try await clientctl(["install", "--root", dir("in")]).output == "installed 1.0.0\n")
        let out = try await clientctl(["install", "--root", dir("out")])
        #expect(out.output.contains("not in the target of release 1.0.0 `id in cohort pilot`"), "\(out.output)")
    }

    /// The store honours Range, and a kept partial download is resumed from it: the
    /// downloader asks only for the rest (one request, resumed after the kept bytes), and a
    /// device completes its kept partial archive.
    @Test func devicesResumeAPartialDownloadFromTheStore() async throws {
        let s3 = try await SeaweedS3.shared()
        let bucket = s3.freshArea("range")
        let build = dir("build")
        try FileManager.default.createDirectory(atPath: build, withIntermediateDirectories: true)
        try Data("<!doctype html><p>big</p>".utf8).write(to: URL(fileURLWithPath: build + "/index.html"))
        try Data((0..<(512 * 1024)).map { _ in UInt8.random(in: 0...255) }).write(to: URL(fileURLWithPath: build + "/blob.bin"))
        try await publish("1.0.0", from: build, into: dir("rel"))
        try await push(dir("rel"), s3, bucket: bucket)
        let archive = try Data(contentsOf: URL(fileURLWithPath: dir("rel") + "/stable/v1.0.0.tar.gz"))
        let ranged = try await s3.get("\(bucket)/notes/stable/v1.0.0.tar.gz", headers: ["Range: bytes=1000-"])
        #expect(ranged.status == 206 && ranged.body == archive.dropFirst(1000))

        let manifest = try Manifest.validate(
            StrictJSON.parseObject(Array(try Data(contentsOf: URL(fileURLWithPath: dir("rel") + "/stable/manifest.json"))))
        ).get()
        let manifestURL = "\(s3.endpoint)/\(bucket)/notes/stable/manifest.json"
        try await clientctl([
            "init", "--root", dir("device"), "--app", "com.example.notes", "--channel", "stable", "--manifest-url", manifestURL,
            "--trust", publicKey, "--shell-version", "1.0.0",
        ])
        // The downloader itself reports where it resumed: exactly after the kept bytes.
        let kept = dir("kept.tar.gz")
        try Data(archive.prefix(archive.count / 2)).write(to: URL(fileURLWithPath: kept))
        let archiveURL = try #require(URL(string: "\(s3.endpoint)/\(bucket)/notes/stable/v1.0.0.tar.gz"))
        let result = try await Downloader(transport: DefaultTransport(), idleTimeout: .seconds(10)).download(
            archiveURL, to: kept, expectedSize: Int64(archive.count), expectedDigest: manifest.sha256)
        #expect(result.resumedFrom == Int64(archive.count / 2) && result.requests == 1 && result.digest == manifest.sha256)

        // And a device with a kept partial download completes it from the store.
        let partial = dir("device") + "/clients/.staging-partial-v1.0.0-\(manifest.sha256.prefix(16)).tar.gz"
        try FileManager.default.createDirectory(atPath: dir("device") + "/clients", withIntermediateDirectories: true)
        try Data(archive.prefix(archive.count / 3)).write(to: URL(fileURLWithPath: partial))
        #expect(try await clientctl(["install", "--root", dir("device")]).output == "installed 1.0.0\n")
        #expect(!FileManager.default.fileExists(atPath: partial))
    }

    /// Refusals leave the store as it was: an archive held with other bytes, a version
    /// below the store's newest (nothing uploaded), bad credentials, an unreachable
    /// endpoint, missing credentials; a profile in a credentials file works.
    @Test func refusalsNameTheReasonAndChangeNothing() async throws {
        let s3 = try await SeaweedS3.shared()
        let bucket = s3.freshArea("refuse")
        try await publish("1.0.0", into: dir("rel"))
        try await publish("1.2.0", into: dir("rel"))
        try await push(dir("rel"), s3, bucket: bucket)
        let before = try await s3.get("\(bucket)/notes/stable/index.json").body

        let other = dir("other")
        try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: true)
        try Data("<!doctype html><p>other</p>".utf8).write(to: URL(fileURLWithPath: other + "/index.html"))
        try await publish("1.0.0", from: other, into: dir("conflict"))
        let conflict = try await push(dir("conflict"), s3, bucket: bucket, expect: 65)
        #expect(
            conflict.errorOutput.contains("version 1.0.0 is already in s3://\(bucket)/notes/stable with another sha256"), "\(conflict.errorOutput)")

        try await publish("1.1.0", into: dir("older"))
        let older = try await push(dir("older"), s3, bucket: bucket, expect: 65)
        #expect(older.errorOutput.contains("version 1.1.0 is not above 1.2.0, the newest release of s3://\(bucket)/notes/stable"))
        #expect(try await s3.head("\(bucket)/notes/stable/v1.1.0.tar.gz").status == 404, "a refused push uploads nothing")
        #expect(try await s3.get("\(bucket)/notes/stable/index.json").body == before)

        var wrong = s3.environment
        wrong["AWS_SECRET_ACCESS_KEY"] = "not-the-secret"
        let denied = try await clientctl(
            ["push", dir("rel"), "s3://\(bucket)/notes", "--endpoint", s3.endpoint], environment: wrong, expect: 78)
        #expect(denied.errorOutput.contains("access denied"), "\(denied.errorOutput)")
        let port = try LoopbackHTTPServer.refusingPort()
        let down = try await clientctl(
            ["push", dir("rel"), "s3://\(bucket)/notes", "--endpoint", "http://127.0.0.1:\(port.port)"], environment: s3.environment, expect: 69)
        #expect(down.errorOutput.contains("connection refused"), "\(down.errorOutput)")
        let none = try await clientctl(
            ["push", dir("rel"), "s3://\(bucket)/notes", "--endpoint", s3.endpoint],
            environment: ["AWS_SHARED_CREDENTIALS_FILE": dir("nothing"), "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": ""], expect: 64)
        #expect(none.errorOutput.contains("no AWS credentials"))
        try "[ci]\naws_access_key_id = \(s3.accessKey)\naws_secret_access_key = \(s3.secretKey)\n".write(
            toFile: dir("credentials"), atomically: true, encoding: .utf8)
        let profile = try await clientctl(
            ["push", dir("rel"), "s3://\(bucket)/notes", "--endpoint", s3.endpoint],
            environment: [
                "AWS_SHARED_CREDENTIALS_FILE": dir("credentials"), "AWS_PROFILE": "ci", "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "",
            ])
        #expect(profile.output.hasPrefix("unchanged:"))
        #expect(try await s3.get("\(bucket)/notes/stable/index.json").body == before)
    }

    /// Ten pushes of ten versions from ten folders at once, as ten CI jobs would: each
    /// lands or is refused as below the newest; no landed release is lost, and
    /// `manifest.json` names the newest.
    @Test func tenConcurrentPushesLoseNoRelease() async throws {
        let s3 = try await SeaweedS3.shared()
        let bucket = s3.freshArea("race")
        try await publish("1.0.0", into: dir("base"))
        try await push(dir("base"), s3, bucket: bucket)
        for n in 1...10 { try await publish("1.0.\(n)", into: dir("job-\(n)")) }
        let results = try await withThrowingTaskGroup(of: (Int, Subprocess.Result).self) { group in
            for n in 1...10 {
                group.addTask {
                    let r = try await Subprocess.run(
                        ClientctlBinary.path, ["push", dir("job-\(n)"), "s3://\(bucket)/notes", "--endpoint", s3.endpoint],
                        environment: s3.environment, gate: nil)
                    return (n, r)
                }
            }
            var all: [Int: Subprocess.Result] = [:]
            for try await (n, r) in group { all[n] = r }
            return all
        }
        var landed = ["1.0.0"]
        for (n, r) in results.sorted(by: { $0.key < $1.key }) {
            if r.status == 0 {
                landed.append("1.0.\(n)")
            } else {
                #expect(r.status == 65 && r.errorOutput.contains("version 1.0.\(n) is not above 1.0."), "push of 1.0.\(n): \(r.errorOutput)")
            }
        }
        #expect(results[10]?.status == 0, "the highest version is never below the newest")
        let versions = try await remoteIndexVersions(s3, bucket: bucket)
        #expect(Set(versions) == Set(landed) && versions.count == landed.count, "index \(versions), landed \(landed)")
        let manifest = try StrictJSON.parseObject(Array(try await s3.get("\(bucket)/notes/stable/manifest.json").body))
        #expect(manifest["version"]?.stringValue == "1.0.10")
    }

    /// `push --keep`: the store's index keeps the newest release; what only older releases
    /// named is deleted once past the grace period, never before; devices still install.
    @Test func pushWithKeepPrunesTheStoreAfterTheGracePeriod() async throws {
        let s3 = try await SeaweedS3.shared()
        let bucket = s3.freshArea("prune")
        for version in ["1.0.0", "1.1.0", "1.2.0"] {
            let source = dir("src-\(version)")
            try FileManager.default.copyItem(atPath: sample, toPath: source)
            try Data("export const version = '\(version)';\n".utf8).write(to: URL(fileURLWithPath: source + "/version.js"))
            try await publish(version, from: source, into: dir("rel"))
        }
        try await push(dir("rel"), s3, bucket: bucket)
        let area = "\(bucket)/notes/stable"
        #expect(try await s3.head("\(area)/v1.0.0.tar.gz").status == 200)

        // Young objects are never deleted: another push may be about to index them.
        let young = try await push(dir("rel"), s3, bucket: bucket, ["--keep", "1"])
        #expect(young.output.contains("removed from index.json: 1.1.0, 1.0.0") && !young.output.contains("deleted"), "\(young.output)")
        #expect(try await remoteIndexVersions(s3, bucket: bucket) == ["1.2.0"])
        #expect(try await s3.head("\(area)/v1.0.0.tar.gz").status == 200)

        let old = try await push(dir("rel"), s3, bucket: bucket, ["--keep", "1", "--prune-grace", "0", "--json"])
        let report = try #require(try JSONSerialization.jsonObject(with: old.stdout) as? [String: Any])
        let channel = try #require((report["channels"] as? [[String: Any]])?.first)
        let deleted = try #require(channel["deleted"] as? [String])
        #expect(deleted.contains("stable/v1.0.0.tar.gz") && deleted.contains("stable/v1.1.0.tar.gz"), "\(deleted)")
        #expect(deleted.filter { $0.hasPrefix("stable/objects/") }.count == 2, "the two older version.js objects: \(deleted)")
        #expect(try await s3.head("\(area)/v1.0.0.tar.gz").status == 404)
        // Everything 1.2.0 names is still there.
        let manifest = try Manifest.validate(try StrictJSON.parseObject(try await s3.get("\(area)/manifest.json").body)).get()
        let delta = try #require(manifest.delta).get()
        let files = try #require(delta.files)
        let list = try ReleaseFileList.parse([UInt8](try await s3.get("\(area)/\(files.url)").body), maxFiles: 1000).get()
        for path in [manifest.url] + delta.patches.map({ $0.url }) + list.files.map({ files.objects + $0.sha256 }) {
            #expect(try await s3.head("\(area)/\(path)").status == 200, "\(path)")
        }

        // A first push with --keep uploads nothing that only the pruned releases need.
        let fresh = s3.freshArea("prune-fresh")
        try await push(dir("rel"), s3, bucket: fresh, ["--keep", "1"])
        #expect(try await s3.head("\(fresh)/notes/stable/v1.2.0.tar.gz").status == 200)
        #expect(try await s3.head("\(fresh)/notes/stable/v1.0.0.tar.gz").status == 404, "a pruned release's archive was uploaded")
    }
}

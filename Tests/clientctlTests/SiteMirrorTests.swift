import ArchivePublishing
import ClientFoundation
import ClientUpdater
import Foundation
import SignedManifest
import StrictJSON
import TestSupport
import Testing

/// `clientctl mirror` as a site runs it (docs/site-mirror.md): the real binary against an
/// origin on 127.0.0.1 holding releases the real `Publisher` wrote, the origin's requests
/// and bytes counted; the mirror's folder served by a real nginx to a real device.
@Suite struct SiteMirrorTests {
    /// An origin (a release folder on a loopback server) and a mirror's folder.
    final class Site: @unchecked Sendable {
        // @unchecked: owned by one test.
        let tmp: TemporaryDirectory
        let key: Ed25519.PrivateKey
        let server: LoopbackHTTPServer
        let faults = LoopbackFaults()
        let keyFile: String

        init() throws {
            tmp = try TemporaryDirectory("site-mirror")
            key = try ReleaseFolder.testKey()
            try FileManager.default.createDirectory(atPath: tmp("releases"), withIntermediateDirectories: true)
            server = try LoopbackHTTPServer(handler: faults.wrap(LoopbackHTTPServer.folder(tmp("releases"))))
            keyFile = tmp("release.pub.pem")
            try Data(try ReleaseFolder.testPublicKeyPEM().utf8).write(to: URL(fileURLWithPath: keyFile))
            // nginx reads the mirror's folder: every folder on its way must be searchable.
            chmod(tmp.path, 0o755)
        }

        deinit { server.stop() }

        var origin: String { tmp("releases") + "/stable" }
        var mirror: String { tmp("mirror") }
        var manifestURL: String { server.url("/stable/manifest.json").absoluteString }

        /// A 300-file client where file `i` has the content of seed `seeds[i] ?? i`.
        func client(_ version: String, seeds: [Int: UInt64]) throws -> String {
            let dir = tmp("src-\(version)")
            try FileManager.default.createDirectory(atPath: dir + "/assets", withIntermediateDirectories: true)
            try Data("<!doctype html><title>\(version)</title><script src=\"assets/f0.js\"></script>\n".utf8)
                .write(to: URL(fileURLWithPath: dir + "/index.html"))
            for i in 0..<300 {
                try SyntheticCode.content(seed: seeds[i] ?? UInt64(i), count: 2_000 + i * 7)
                    .write(to: URL(fileURLWithPath: dir + "/assets/f\(i).js"))
            }
            return dir
        }

        /// Publishes with the real `Publisher` on a thread of its own (patches cost seconds of CPU).
        @discardableResult
        func publish(
            _ version: String, seeds: [Int: UInt64] = [:], bases: Int = 3, executable: Bool = false, minShell: Version = Version(1, 0, 0),
            baseURL: String? = nil
        ) async throws -> PublishResult {
            let source = try client(version, seeds: seeds)
            if executable { chmod(source + "/assets/f7.js", 0o755) }
            var request = PublishRequest(
                source: source, app: "com.example.notes", channel: "stable",
                version: Version(version) ?? Version(0, 0, 0), minShellVersion: minShell, outputDirectory: tmp("releases"), baseURL: baseURL)
            request.deltaBases = bases
            let result = try await onOwnThread { [self, request] in try await Publisher.publish(request, key: self.key) }
            chmodReadable(tmp("releases"))
            return result
        }

        /// `clientctl mirror` (or `clientctl-device mirror`) into the mirror's folder.
        func mirrorRun(binary: String = ClientctlBinary.path) async throws -> (Subprocess.Result, JSONObject?) {
            let result = try await Subprocess.run(binary, ["mirror", manifestURL, "--trust", keyFile, "--to", mirror, "--json"])
            let report = result.status == 0 ? try? StrictJSON.parseObject(result.stdout) : nil
            return (result, report)
        }

        /// Requests the origin answered since `mark`, and the body bytes it sent for them.
        func origin(since mark: Int) async throws -> (paths: [String], bytes: Int64) {
            let log = try await server.settledLog().dropFirst(mark)
            return (log.map(\.request.path), log.reduce(0) { $0 + $1.bodyBytesSent })
        }

        func manifest() throws -> JSONObject { try StrictJSON.parseObject(try Data(contentsOf: URL(fileURLWithPath: origin + "/manifest.json"))) }

        func delta() throws -> ReleaseDelta {
            let object = try manifest()
            let version = Version(object["version"]?.stringValue ?? "") ?? Version(0, 0, 0)
            return try #require(object["delta"].map { ReleaseDelta.parse($0, version: version) }).get()
        }

        /// The files of the origin's file list `files`: SHA-256 → path.
        func listed(_ files: ReleaseDelta.Files) throws -> [String: String] {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: origin + "/" + files.url))
            let list = try ReleaseFileList.parse([UInt8](bytes), maxFiles: 100_000).get()
            return Dictionary(list.files.map { ($0.sha256, $0.path) }, uniquingKeysWith: { first, _ in first })
        }

        /// The objects in the mirror's folder.
        func mirroredObjects() -> Set<String> {
            Set((try? FileManager.default.contentsOfDirectory(atPath: mirror + "/stable/objects")) ?? [])
        }

        /// The mirror's folder as it is now (temporary files included).
        func snapshot() throws -> TreeSnapshot { try TreeSnapshot(mirror, ignoring: []) }
    }

    static let changed: [Int: UInt64] = [3: 9003, 40: 9040, 41: 9041, 150: 9150, 299: 9299]

    static func strings(_ value: JSONValue?) -> [String] {
        guard case .array(let items)? = value else { return [] }
        return items.compactMap(\.stringValue)
    }

    static func bytes(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

    /// The first run copies what a device reads, each file the origin's bytes; a second run
    /// with nothing new takes no archive; a new release costs the origin its patch alone,
    /// and the archive rebuilt from it is the signed one.
    @Test func aMirrorCopiesAChannelThenTakesOnlyThePatchOfTheNextRelease() async throws {
        let site = try Site()
        try await site.publish("1.0.0")
        let firstList = try #require(try site.delta().files)
        let (first, report) = try await site.mirrorRun()
        #expect(first.status == 0, "\(first.errorOutput)")
        for name in ["manifest.json", "index.json", "v1.0.0.tar.gz", firstList.url] {
            #expect(Self.bytes(site.mirror + "/stable/" + name) == Self.bytes(site.origin + "/" + name), "\(name)")
        }
        #expect(report?["version"]?.stringValue == "1.0.0" && report?["manifest"]?.stringValue == "stable/manifest.json")
        #expect(
            Self.strings(report?["written"]).sorted() == [
                "stable/\(firstList.url)", "stable/index.json", "stable/manifest.json", "stable/v1.0.0.tar.gz",
            ])
        #expect(site.mirroredObjects().isEmpty, "a first run knows no release the site runs")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: site.mirror).filter { $0.hasPrefix(".") }
        #expect(leftovers.isEmpty, "\(leftovers)")

        // Nothing new: the small documents again, no archive.
        var mark = try await site.server.settledLog().count
        let (again, unchanged) = try await site.mirrorRun()
        #expect(again.status == 0 && unchanged?["changed"] == .bool(false), "\(again.errorOutput)")
        #expect(try await !site.origin(since: mark).paths.contains("/stable/v1.0.0.tar.gz"))

        let published = try await site.publish("1.1.0", seeds: Self.changed)
        let patch = try #require(try site.delta().patches.first)
        let list = try #require(try site.delta().files)
        mark = try await site.server.settledLog().count
        let (second, secondReport) = try await site.mirrorRun()
        #expect(second.status == 0, "\(second.errorOutput)")
        let taken = try await site.origin(since: mark)
        #expect(taken.paths.contains("/stable/patches/\(patch.sha256).zst"), "\(taken.paths)")
        #expect(!taken.paths.contains("/stable/v1.1.0.tar.gz"), "the archive is rebuilt, not downloaded: \(taken.paths)")
        // The file list once; no object: each is written from the rebuilt tree.
        #expect(taken.paths.filter { $0 == "/stable/\(list.url)" }.count == 1, "\(taken.paths)")
        #expect(!taken.paths.contains { $0.contains("/objects/") || $0.contains(firstList.url) }, "\(taken.paths)")
        // The patch, the file list and the small documents (manifest, index, a 404 for the next root).
        let documents = Int64((Self.bytes(site.origin + "/manifest.json")?.count ?? 0) + (Self.bytes(site.origin + "/index.json")?.count ?? 0))
        #expect(taken.bytes <= patch.size + list.size + documents + 1024, "origin sent \(taken.bytes) B; patch \(patch.size) B")
        // The run counts what it downloaded: the patch and the list at least, no more than the origin sent.
        let counted = try #require(secondReport?["originBytes"]).integerValue ?? -1
        #expect(counted >= patch.size + list.size && counted <= taken.bytes, "originBytes \(counted); origin sent \(taken.bytes) B")
        #expect(taken.bytes * 3 < published.manifest.size, "origin sent \(taken.bytes) B for a \(published.manifest.size)-byte archive")
        // The objects of the files 1.0.0 does not hold (the changed ones and index.html), the origin's bytes.
        let old = try site.listed(firstList)
        let changed = Set(try site.listed(list).keys.filter { old[$0] == nil })
        #expect(changed.count == Self.changed.count + 1, "\(changed)")
        #expect(site.mirroredObjects() == changed)
        for sha in changed {
            #expect(Self.bytes(site.mirror + "/stable/objects/" + sha) == Self.bytes(site.origin + "/objects/" + sha), "\(sha)")
        }
        #expect(Self.bytes(site.mirror + "/stable/" + list.url) == Self.bytes(site.origin + "/" + list.url))
        #expect(Self.strings(secondReport?["rebuilt"]) == ["stable/v1.1.0.tar.gz"])
        let rebuilt = site.mirror + "/stable/v1.1.0.tar.gz"
        #expect(try Digest.hex(.sha256, ofFileAt: rebuilt) == published.manifest.sha256)
        #expect(Self.bytes(rebuilt) == Self.bytes(site.origin + "/v1.1.0.tar.gz"))
        #expect(Self.bytes(site.mirror + "/stable/patches/\(patch.sha256).zst") == Self.bytes(site.origin + "/patches/\(patch.sha256).zst"))
        #expect(Self.bytes(site.mirror + "/stable/manifest.json") == Self.bytes(site.origin + "/manifest.json"))
        #expect(FileManager.default.fileExists(atPath: site.mirror + "/stable/v1.0.0.tar.gz"), "the index still names 1.0.0")
    }

    /// A release needing a newer shell: devices on the older shell take the newest release
    /// of the index that runs on it, so a first run mirrors that one too, and no older one.
    @Test func theReleaseAnOlderShellTakesIsMirroredToo() async throws {
        let site = try Site()
        try await site.publish("1.0.0", bases: 0)
        try await site.publish("1.1.0", seeds: Self.changed, bases: 0)
        try await site.publish("2.0.0", seeds: [5: 9005], bases: 0, minShell: Version(2, 0, 0))
        let (run, report) = try await site.mirrorRun()
        #expect(run.status == 0, "\(run.errorOutput)")
        let written = Self.strings(report?["written"]).sorted()
        #expect(written == ["stable/index.json", "stable/manifest.json", "stable/v1.1.0.tar.gz", "stable/v2.0.0.tar.gz"], "\(written)")
        #expect(Self.bytes(site.mirror + "/stable/v1.1.0.tar.gz") == Self.bytes(site.origin + "/v1.1.0.tar.gz"))
    }

    /// A release whose archive holds an executable file: the tree tar keeps no execute bit,
    /// so the rebuilt archive is not the signed one; the run says so and downloads it.
    @Test func anArchiveThatDoesNotRebuildIsDownloaded() async throws {
        let site = try Site()
        try await site.publish("1.0.0")
        #expect(try await site.mirrorRun().0.status == 0)
        let published = try await site.publish("1.1.0", seeds: Self.changed, executable: true)
        let patch = try #require(try site.delta().patches.first)
        let mark = try await site.server.settledLog().count
        let (run, report) = try await site.mirrorRun()
        #expect(run.status == 0, "\(run.errorOutput)")
        let taken = try await site.origin(since: mark).paths
        #expect(taken.contains("/stable/patches/\(patch.sha256).zst") && taken.contains("/stable/v1.1.0.tar.gz"), "\(taken)")
        #expect(Self.strings(report?["rebuilt"]) == [])
        let notes = Self.strings(report?["notes"])
        #expect(notes.count == 1 && notes[0].contains("not rebuilt from the patch from 1.0.0"), "\(notes)")
        #expect(run.errorOutput.contains("note: release 1.1.0: not rebuilt"), "\(run.errorOutput)")
        #expect(try Digest.hex(.sha256, ofFileAt: site.mirror + "/stable/v1.1.0.tar.gz") == published.manifest.sha256)
        #expect(FileManager.default.fileExists(atPath: site.mirror + "/stable/patches/\(patch.sha256).zst"), "devices on 1.0.0 take the patch")
    }

    /// An archive that is not the signed one, a manifest altered after signing, and an
    /// older manifest served again: each run exits 65 naming why, and the folder is byte
    /// for byte what the last good run left (no staged file either).
    @Test func whatDoesNotVerifyLeavesTheLastGoodCopy() async throws {
        let site = try Site()
        try await site.publish("1.0.0")
        let oldManifest = try #require(Self.bytes(site.origin + "/manifest.json"))
        #expect(try await site.mirrorRun().0.status == 0)
        var good = try site.snapshot()

        // 1.1.0 without patches: its archive is downloaded; the origin's has other bytes.
        try await site.publish("1.1.0", seeds: Self.changed, bases: 0)
        let archive = site.origin + "/v1.1.0.tar.gz"
        let signed = try #require(Self.bytes(archive))
        var altered = signed
        altered[altered.count / 2] ^= 0xFF
        try altered.write(to: URL(fileURLWithPath: archive))
        let (tampered, _) = try await site.mirrorRun()
        #expect(tampered.status == 65, "\(tampered.errorOutput)")
        #expect(tampered.errorOutput.contains("v1.1.0.tar.gz"), "\(tampered.errorOutput)")
        #expect(try site.snapshot() == good)

        // A manifest changed after signing.
        try signed.write(to: URL(fileURLWithPath: archive))
        let manifestPath = site.origin + "/manifest.json"
        let signedManifest = try #require(Self.bytes(manifestPath))
        let text = String(decoding: signedManifest, as: UTF8.self).replacingOccurrences(
            of: "\"minShellVersion\": \"1.0.0\"", with: "\"minShellVersion\": \"0.9.0\"")
        #expect(text.utf8.count == signedManifest.count && Data(text.utf8) != signedManifest, "the edit must change the manifest")
        try Data(text.utf8).write(to: URL(fileURLWithPath: manifestPath))
        let (forged, _) = try await site.mirrorRun()
        #expect(forged.status == 65, "\(forged.errorOutput)")
        #expect(forged.errorOutput.contains("signature"), "\(forged.errorOutput)")
        #expect(try site.snapshot() == good)

        // The origin whole again: the mirror takes 1.1.0.
        try signedManifest.write(to: URL(fileURLWithPath: manifestPath))
        #expect(try await site.mirrorRun().0.status == 0)
        #expect(Self.bytes(site.mirror + "/stable/v1.1.0.tar.gz") == signed)
        good = try site.snapshot()

        // An older manifest (a stale cache): refused as a device refuses a rollback.
        try oldManifest.write(to: URL(fileURLWithPath: manifestPath))
        let (replayed, _) = try await site.mirrorRun()
        #expect(replayed.status == 65, "\(replayed.errorOutput)")
        #expect(replayed.errorOutput.contains("below 1.1.0"), "\(replayed.errorOutput)")
        #expect(try site.snapshot() == good)

        // Another run holds the folder (a timer firing twice): 75, nothing touched.
        try signedManifest.write(to: URL(fileURLWithPath: manifestPath))
        let held = try #require(try Flock.attempt(site.mirror, .folder))
        let (busy, _) = try await site.mirrorRun()
        held.release()
        #expect(busy.status == 75, "\(busy.errorOutput)")
        #expect(try site.snapshot() == good)
    }

    /// A run killed while the next archive arrives: the folder's files are the last good
    /// run's (only its staging folder is new), and the next run removes that and finishes.
    @Test func aRunKilledMidDownloadLeavesTheLastGoodCopy() async throws {
        let site = try Site()
        try await site.publish("1.0.0", bases: 0)
        #expect(try await site.mirrorRun().0.status == 0)
        let good = try site.snapshot()
        try await site.publish("1.1.0", seeds: Self.changed, bases: 0)
        site.faults.add(.stall(afterBytes: 4096), path: "/stable/v1.1.0.tar.gz", requests: 1...1)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ClientctlBinary.path)
        process.arguments = ["mirror", site.manifestURL, "--trust", site.keyFile, "--to", site.mirror]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.runUnmasked()
        try await Poll.until("the archive's first bytes sent") {
            site.server.log.contains { $0.request.path == "/stable/v1.1.0.tar.gz" && $0.bodyBytesSent >= 4096 }
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        var now = try site.snapshot()
        let staging = now.entries.keys.filter { $0.hasPrefix(".mirror-staging-") }
        #expect(!staging.isEmpty, "killed mid-run: \(now)")
        now.entries = now.entries.filter { !$0.key.hasPrefix(".mirror-staging-") }
        #expect(now == good)
        site.faults.clear()
        let (rerun, _) = try await site.mirrorRun()
        #expect(rerun.status == 0, "\(rerun.errorOutput)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: site.mirror) == ["stable"])
        #expect(Self.bytes(site.mirror + "/stable/v1.1.0.tar.gz") == Self.bytes(site.origin + "/v1.1.0.tar.gz"))
    }

    /// A channel with trust roots and a rollout role: the roots and the restriction in
    /// force are mirrored; a next root that does not verify refuses the run and the folder
    /// stays; the properly signed one is walked to; releases the origin's index no longer
    /// names are pruned, the current one kept.
    @Test func rootsRestrictionsAndPruning() async throws {
        let site = try Site()
        let releasePEM = ClientctlBinary.packagePath("Keys/test-signing.pem")
        let pub = ClientctlBinary.packagePath("Keys/test-signing.pub.pem")
        func clientctl(_ args: [String]) async throws {
            let r = try await ClientctlBinary.run(args)
            #expect(r.status == 0, "clientctl \(args.joined(separator: " ")): \(r.errorOutput)")
        }
        try await clientctl(["keygen", "--out", site.tmp("guard")])
        try await clientctl([
            "root", "init", site.tmp("root-1.json"), "--app", "com.example.notes", "--channel", "stable", "--root-key", pub,
            "--release-key", pub, "--rollout-key", site.tmp("guard.pub.pem"), "--expires", "365d",
        ])
        try await clientctl(["root", "sign", site.tmp("root-1.json"), "--key", releasePEM])
        try FileManager.default.createDirectory(atPath: site.origin + "/root", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: site.tmp("root-1.json"), toPath: site.origin + "/root/1.json")
        try await site.publish("1.0.0", bases: 0)
        try await clientctl(["rollout", "restrict", "stable", "--out", site.tmp("releases"), "--key", site.tmp("guard.pem"), "--pause"])
        let (first, report) = try await site.mirrorRun()
        #expect(first.status == 0, "\(first.errorOutput)")
        for name in ["root/1.json", "restriction.json", "manifest.json"] {
            #expect(Self.bytes(site.mirror + "/stable/" + name) == Self.bytes(site.origin + "/" + name), "\(name)")
        }
        #expect(Self.strings(report?["written"]).first == "stable/root/1.json", "roots go in place first")
        #expect(Self.strings(report?["written"]).last == "stable/manifest.json", "the manifest last")
        let good = try site.snapshot()

        // Root 2 with a field changed after signing: refused, nothing changes.
        try await clientctl(["root", "init", site.tmp("root-2.json"), "--from", site.origin + "/root/1.json", "--expires", "300d"])
        try await clientctl(["root", "sign", site.tmp("root-2.json"), "--key", releasePEM])
        let signed = try Data(contentsOf: URL(fileURLWithPath: site.tmp("root-2.json")))
        var forged = try StrictJSON.parseObject(signed)
        forged["expires"] = .string(RFC3339.format(Date(timeIntervalSinceNow: 200 * 86_400)))
        try Data(JSONPrettyPrinter.render(.object(forged))).write(to: URL(fileURLWithPath: site.origin + "/root/2.json"))
        let (refused, _) = try await site.mirrorRun()
        #expect(refused.status == 65, "\(refused.errorOutput)")
        #expect(refused.errorOutput.contains("root/2.json"), "\(refused.errorOutput)")
        #expect(try site.snapshot() == good)
        try signed.write(to: URL(fileURLWithPath: site.origin + "/root/2.json"))
        #expect(try await site.mirrorRun().0.status == 0)
        #expect(Self.bytes(site.mirror + "/stable/root/2.json") == signed)

        // Two more releases, then the origin keeps only the newest: so does the mirror.
        try await site.publish("1.1.0", seeds: Self.changed, bases: 0)
        #expect(try await site.mirrorRun().0.status == 0)
        #expect(!FileManager.default.fileExists(atPath: site.mirror + "/stable/restriction.json"), "the pause was for 1.0.0's manifest")
        try await site.publish("1.2.0", seeds: [7: 9007], bases: 0)
        #expect(try await site.mirrorRun().0.status == 0)
        #expect(FileManager.default.fileExists(atPath: site.mirror + "/stable/v1.0.0.tar.gz"), "the index still names 1.0.0")
        try await clientctl(["prune", "stable", "--out", site.tmp("releases"), "--keep", "1"])
        let (pruning, pruned) = try await site.mirrorRun()
        #expect(pruning.status == 0, "\(pruning.errorOutput)")
        #expect(Self.strings(pruned?["pruned"]) == ["stable/v1.0.0.tar.gz", "stable/v1.1.0.tar.gz"])
        let left = try FileManager.default.contentsOfDirectory(atPath: site.mirror + "/stable").sorted()
        #expect(left == ["index.json", "manifest.json", "root", "v1.2.0.tar.gz"], "\(left)")
        #expect(Self.bytes(site.mirror + "/stable/index.json") == Self.bytes(site.origin + "/index.json"))
    }

    /// A device on 1.0.0 and a release with no patch from 1.0.0: the device takes the per-file
    /// path, and every byte of it (the file list and the objects) comes from the mirror
    /// under nginx; the origin serves it the manifest and the roots alone. The mirror made
    /// the objects from the archive it holds, and prunes one no carried list names.
    @Test func aDeviceTakesTheFileListAndObjectsFromTheMirror() async throws {
        let site = try Site()
        try await site.publish("1.0.0")
        #expect(try await site.mirrorRun().0.status == 0)
        let nginx = try PlainNginx(root: site.mirror, in: site.tmp("nginx"))
        defer { nginx.stop() }
        let root = site.tmp("device")
        let device = ClientctlBinary.devicePath
        let initialised = try await Subprocess.run(
            device,
            [
                "init", "--root", root, "--app", "com.example.notes", "--channel", "stable", "--manifest-url", site.manifestURL,
                "--mirror", "http://127.0.0.1:\(nginx.port)/stable/manifest.json", "--trust", site.keyFile, "--shell-version", "1.0.0",
            ])
        #expect(initialised.status == 0, "\(initialised.errorOutput)")
        let first = try await Subprocess.run(device, ["install", "--root", root])
        #expect(first.status == 0, "\(first.errorOutput)")

        try await site.publish("1.1.0", seeds: Self.changed)
        let between = try #require(try site.delta().files)
        var seeds = Self.changed
        seeds[7] = 9007
        try await site.publish("1.2.0", seeds: seeds, bases: 1)
        let delta = try site.delta()
        #expect(delta.patches.map(\.from) == [Version(1, 1, 0)], "no patch from what the device runs")
        let list = try #require(delta.files)
        var mark = try await site.server.settledLog().count
        let (run, _) = try await site.mirrorRun()
        #expect(run.status == 0, "\(run.errorOutput)")
        let taken = try await site.origin(since: mark).paths
        #expect(taken.contains("/stable/v1.2.0.tar.gz") && taken.contains("/stable/\(list.url)"), "\(taken)")
        #expect(!taken.contains { $0.contains("/objects/") }, "objects are written from the archive: \(taken)")
        // 1.1.0's index.html is in no carried list: its object is gone, or was never written.
        let betweenIndex = try #require(try site.listed(between).first { $0.value == "index.html" }?.key)
        #expect(!site.mirroredObjects().contains(betweenIndex))

        mark = try await site.server.settledLog().count
        let lines = nginx.accessLog.count
        let second = try await Subprocess.run(device, ["install", "--root", root, "--json"])
        #expect(second.status == 0, "\(second.errorOutput)")
        #expect(try StrictJSON.parseObject(second.stdout)["version"]?.stringValue == "1.2.0", "\(second.output)")
        #expect(second.errorOutput.contains("with the file list"), "the per-file path: \(second.errorOutput)")
        let served = nginx.accessLog.dropFirst(lines).joined(separator: "\n")
        #expect(served.contains("/stable/\(list.url)") && served.contains("/stable/objects/"), "\(served)")
        let origin = try await site.origin(since: mark).paths
        #expect(origin.contains("/stable/manifest.json"), "\(origin)")
        #expect(
            origin.allSatisfy { $0 == "/stable/manifest.json" || $0.hasPrefix("/stable/root/") },
            "no file list, patch, object or archive from the origin: \(origin)")
        #expect(try TreeSnapshot(root + "/clients/v1.2.0") == (try TreeSnapshot(site.tmp("src-1.2.0"))))
    }

    /// An object the mirror cannot make (the archive is on another origin, so it holds no
    /// tree) is fetched from the origin, checked against the list: one the origin altered
    /// is refused and not mirrored, the others are; the next run takes it once it is whole.
    @Test func anObjectTheOriginAlteredIsRefused() async throws {
        let site = try Site()
        try await site.publish("1.0.0")
        let firstList = try #require(try site.delta().files)
        #expect(try await site.mirrorRun().0.status == 0)
        try await site.publish("1.1.0", seeds: Self.changed, baseURL: "http://127.0.0.1:9/cdn")
        let list = try #require(try site.delta().files)
        let old = try site.listed(firstList)
        let listed = try site.listed(list)
        let changed = Set(listed.keys.filter { old[$0] == nil })
        let target = try #require(listed.first { $0.value == "assets/f40.js" }?.key)
        let objectFile = site.origin + "/objects/" + target
        let signed = try #require(Self.bytes(objectFile))
        var altered = signed
        altered[altered.count / 2] ^= 0x20
        try altered.write(to: URL(fileURLWithPath: objectFile))
        var mark = try await site.server.settledLog().count
        let (run, report) = try await site.mirrorRun()
        #expect(run.status == 0, "\(run.errorOutput)")
        let taken = try await site.origin(since: mark).paths
        #expect(taken.filter { $0.contains("/objects/") }.count >= changed.count, "fetched from the origin: \(taken)")
        let notes = Self.strings(report?["notes"])
        #expect(notes.contains { $0.contains("object \(target) refused") }, "\(notes)")
        #expect(site.mirroredObjects() == changed.subtracting([target]))
        #expect(!FileManager.default.fileExists(atPath: site.mirror + "/stable/objects/" + target))
        for sha in changed where sha != target {
            #expect(Self.bytes(site.mirror + "/stable/objects/" + sha) == Self.bytes(site.origin + "/objects/" + sha), "\(sha)")
        }

        try signed.write(to: URL(fileURLWithPath: objectFile))
        mark = try await site.server.settledLog().count
        let (again, _) = try await site.mirrorRun()
        #expect(again.status == 0, "\(again.errorOutput)")
        #expect(try await site.origin(since: mark).paths.filter { $0.contains("/objects/") } == ["/stable/objects/\(target)"])
        #expect(Self.bytes(site.mirror + "/stable/objects/" + target) == signed)

        // 1.2.0 changes index.html again: 1.1.0's index.html is in no carried list, so it is pruned.
        let replaced = try #require(listed.first { $0.value == "index.html" }?.key)
        #expect(site.mirroredObjects().contains(replaced))
        try await site.publish("1.2.0", seeds: Self.changed.merging([7: 9007]) { a, _ in a })
        let (pruning, pruningReport) = try await site.mirrorRun()
        #expect(pruning.status == 0, "\(pruning.errorOutput)")
        let removed = Self.strings(pruningReport?["pruned"])
        #expect(removed.contains("stable/objects/\(replaced)"), "\(removed)")
        #expect(!site.mirroredObjects().contains(replaced) && site.mirroredObjects().contains(target))
    }

    /// The mirror's folder under nginx is what a device installs from: the first release
    /// as an archive, the next through the patch the mirror holds, the origin never asked.
    @Test func aDeviceInstallsFromTheMirrorServedByNginx() async throws {
        let site = try Site()
        try await site.publish("1.0.0")
        #expect(try await site.mirrorRun(binary: ClientctlBinary.devicePath).0.status == 0, "clientctl-device has the command too")
        let nginx = try PlainNginx(root: site.mirror, in: site.tmp("nginx"))
        defer { nginx.stop() }
        let root = site.tmp("device")
        let device = ClientctlBinary.devicePath
        let initialised = try await Subprocess.run(
            device,
            [
                "init", "--root", root, "--app", "com.example.notes", "--channel", "stable", "--manifest-url",
                "http://127.0.0.1:\(nginx.port)/stable/manifest.json", "--trust", site.keyFile, "--shell-version", "1.0.0",
            ])
        #expect(initialised.status == 0, "\(initialised.errorOutput)")
        var mark = try await site.server.settledLog().count
        let first = try await Subprocess.run(device, ["install", "--root", root, "--json"])
        #expect(first.status == 0, "\(first.errorOutput)")
        #expect(try StrictJSON.parseObject(first.stdout)["version"]?.stringValue == "1.0.0", "\(first.output)")
        #expect(try await site.origin(since: mark).paths.isEmpty, "the device reads the mirror only")

        try await site.publish("1.1.0", seeds: Self.changed)
        let patch = try #require(try site.delta().patches.first)
        #expect(try await site.mirrorRun().0.status == 0)
        mark = try await site.server.settledLog().count
        let linesBefore = nginx.accessLog.count
        let second = try await Subprocess.run(device, ["install", "--root", root, "--json"])
        #expect(second.status == 0, "\(second.errorOutput)")
        #expect(try StrictJSON.parseObject(second.stdout)["version"]?.stringValue == "1.1.0", "\(second.output)")
        let served = nginx.accessLog.dropFirst(linesBefore).joined(separator: "\n")
        #expect(served.contains("/stable/patches/\(patch.sha256).zst") && !served.contains("v1.1.0.tar.gz"), "\(served)")
        #expect(try await site.origin(since: mark).paths.isEmpty, "the device reads the mirror only")
        let installed = try TreeSnapshot(root + "/clients/v1.1.0")
        #expect(installed == (try TreeSnapshot(site.tmp("src-1.1.0"))))
    }
}

/// A real nginx mirror that answers what a request did not ask for (nginx's `return 304`
/// and `return 416` send those statuses whatever the request: nginx's rewrite module), in
/// front of the real binary: before, `install` exited 65 (`HTTP 304`) and never asked the
/// origin; now the mirror is skipped for the check and the archive comes from the origin.
@Suite struct MirrorOddStatusTests {
    /// The fixture's releases copied to a mirror folder served by nginx, whose location for
    /// the archive says `archive`, and the device `device2` initialized behind it.
    static func nginxMirror(_ f: DeviceFixture, archive: String) async throws -> PlainNginx {
        try FileManager.default.createDirectory(atPath: f.tmp("mirror"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: f.tmp("releases"), toPath: f.tmp("mirror/site"))
        chmod(f.tmp.path, 0o755)
        chmodReadable(f.tmp("mirror"))
        let nginx = try PlainNginx(root: f.tmp("mirror"), in: f.tmp("nginx"), locations: "location = /site/stable/v1.0.0.tar.gz { \(archive) }")
        let made = try await MirrorDeviceTests.initDevice(f, mirrors: ["http://127.0.0.1:\(nginx.port)/site/stable/manifest.json"])
        #expect(made.status == 0, "\(made.errorOutput)")
        return nginx
    }

    @Test(arguments: [304, 416])
    func aMirrorAnsweringAStatusNotAskedForCostsOnlySpeed(status: Int) async throws {
        let f = try DeviceFixture()
        try f.publish("1.0.0")
        let nginx = try await Self.nginxMirror(f, archive: "return \(status);")
        defer { nginx.stop() }
        let install = try await ClientctlBinary.run(["install", "--root", f.tmp("device2"), "--json"])
        #expect(install.status == 0, "\(install.errorOutput)")
        let report = try JSONDecoder().decode(InstallReport.self, from: install.stdout)
        #expect(report.result == .installed && report.version == "1.0.0", "\(report)")
        #expect(f.requests(to: "/stable/v1.0.0.tar.gz").count == 1, "the archive from the origin")
        #expect(nginx.accessLog.filter { $0.contains("GET /site/stable/v1.0.0.tar.gz") && $0.contains(" \(status) ") }.count == 1)
        let said = install.errorOutput
        #expect(said.contains("HTTP \(status)") && said.contains("skipped for the rest of this check"), "\(said)")
    }
}

extension MirrorOddStatusTests {
    /// A mirror that trickles (nginx's `limit_rate 8k`: bytes every second, each well inside
    /// the device's 10 s mirror timeout, at a sixteenth of the floor rate) held a check for as
    /// long as it pleased before: the 1 MiB archive alone took over two minutes from it, and
    /// the origin was never asked. The real binary now leaves the mirror once its body falls
    /// behind the floor, after its idle timeout, and takes the rest from the origin with
    /// Range. The run is cut at 100 s so that the old behaviour fails instead of waiting.
    @Test func aTricklingMirrorCostsOnlyItsTimeout() async throws {
        let f = try DeviceFixture()
        let source = f.tmp("big-client")
        try FileManager.default.createDirectory(atPath: source, withIntermediateDirectories: true)
        try Data("<!doctype html><title>notes</title><p id=\"version\">1.0.0</p>\n".utf8)
            .write(to: URL(fileURLWithPath: source + "/index.html"))
        let noise = try #require(FileHandle(forReadingAtPath: "/dev/urandom")).readData(ofLength: 1 << 20)
        try noise.write(to: URL(fileURLWithPath: source + "/big.bin"))
        let published = try await ClientctlBinary.run([
            "publish", source, "--app", "com.example.notes", "--channel", "stable", "--version", "1.0.0", "--min-shell", "1.0.0",
            "--key", ClientctlBinary.packagePath("Keys/test-signing.pem"), "--out", f.tmp("releases"),
        ])
        #expect(published.status == 0, "\(published.errorOutput)")
        let nginx = try await Self.nginxMirror(f, archive: "limit_rate 8k;")
        defer { nginx.stop() }
        let install = try await ClientctlBinary.run(["install", "--root", f.tmp("device2"), "--json"], timeout: .seconds(100))
        #expect(install.status == 0, "\(install.errorOutput)")
        let report = try JSONDecoder().decode(InstallReport.self, from: install.stdout)
        #expect(report.result == .installed && report.version == "1.0.0", "\(report)")
        let fromOrigin = f.requests(to: "/stable/v1.0.0.tar.gz")
        #expect(fromOrigin.count == 1 && fromOrigin.first?.headers["range"]?.hasPrefix("bytes=") == true, "the rest, resumed: \(fromOrigin)")
        #expect(install.errorOutput.contains("slower than its floor"), "\(install.errorOutput)")
    }
}

/// Makes every file and folder under `path` readable by any user (nginx's worker).
private func chmodReadable(_ path: String) {
    chmod(path, 0o755)
    guard let walker = FileManager.default.enumerator(atPath: path) else { return }
    while let rel = walker.nextObject() as? String {
        var st = stat()
        let full = path + "/" + rel
        guard lstat(full, &st) == 0 else { continue }
        chmod(full, st.st_mode & S_IFMT == S_IFDIR ? 0o755 : 0o644)
    }
}

/// nginx (Debian `nginx-light`) serving `root` over plain HTTP on 127.0.0.1, with its own
/// config and prefix, no master process (as Scripts/nginx-integration starts it).
final class PlainNginx: @unchecked Sendable {
    // @unchecked: immutable after init.
    let daemon: LoopbackDaemon
    let port: UInt16
    let folder: String

    /// - Parameter locations: more of the server block (`location` rules a test adds).
    init(root: String, in folder: String, locations: String = "") throws {
        guard let binary = LoopbackDaemon.find("nginx") else { throw DaemonError("nginx not installed") }
        self.folder = folder
        try FileManager.default.createDirectory(atPath: folder + "/tmp", withIntermediateDirectories: true)
        port = try LoopbackHTTPServer.unusedPort()
        let config = """
            daemon off;
            master_process off;
            worker_processes 1;
            pid \(folder)/nginx.pid;
            error_log \(folder)/error.log warn;
            events { worker_connections 128; }
            http {
              access_log \(folder)/access.log;
              client_body_temp_path \(folder)/tmp/body;
              proxy_temp_path \(folder)/tmp/proxy;
              fastcgi_temp_path \(folder)/tmp/fastcgi;
              uwsgi_temp_path \(folder)/tmp/uwsgi;
              scgi_temp_path \(folder)/tmp/scgi;
              types { application/json json; application/gzip gz; }
              default_type application/octet-stream;
              server {
                listen 127.0.0.1:\(port);
                root \(root);
                etag on;
                location ~ /\\. { return 404; }
                location ~ (manifest|index|restriction)\\.json$ { add_header Cache-Control no-cache; }
                \(locations)
              }
            }

            """
        try config.write(toFile: folder + "/nginx.conf", atomically: true, encoding: .utf8)
        daemon = try LoopbackDaemon(binary, ["-p", folder, "-c", folder + "/nginx.conf"], port: port, log: folder + "/nginx.out")
    }

    /// Lines of nginx's access log.
    var accessLog: [String] {
        ((try? String(contentsOfFile: folder + "/access.log", encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    func stop() { daemon.stop() }
}

import ClientFoundation
import ClientUpdater
import Foundation
import ReleaseSigning
import SignedManifest
import TestSupport
import Testing

/// A release folder, a device of its channel whose feed is a real HTTP server on
/// 127.0.0.1 (so any request the device sends is seen), and a "stick": the folder
/// `clientctl export` writes (docs/offline-media.md).
struct MediaRig {
    let dir: TemporaryDirectory
    let server: LoopbackHTTPServer
    let sample = ClientctlBinary.packagePath("Fixtures/sample-client")
    let key = ClientctlBinary.packagePath("Keys/test-signing.pem")
    var stick: String { dir("stick") }
    var media: String { dir("stick/clientctl-media/com.example.notes/stable") }

    init() throws {
        dir = try TemporaryDirectory("media")
        try FileManager.default.createDirectory(atPath: dir("rel"), withIntermediateDirectories: true)
        server = try LoopbackHTTPServer(handler: LoopbackHTTPServer.folder(dir("rel")))
    }

    @discardableResult
    func clientctl(
        _ args: [String], expect status: Int32 = 0, environment: [String: String] = [:], sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Subprocess.Result {
        let r = try await ClientctlBinary.run(args, environment: environment)
        #expect(r.status == status, "clientctl \(args.joined(separator: " ")): \(r.errorOutput)", sourceLocation: sourceLocation)
        return r
    }

    func publish(_ version: String, _ extra: [String] = []) async throws {
        try await clientctl(
            [
                "publish", sample, "--app", "com.example.notes", "--channel", "stable", "--version", version, "--min-shell", "1.0.0",
                "--key", key, "--out", dir("rel"),
            ] + extra)
    }

    func export(_ extra: [String] = [], to: String? = nil, expect status: Int32 = 0) async throws -> Subprocess.Result {
        try await clientctl(["export", "stable", "--from", dir("rel"), "--to", to ?? stick, "--key", key] + extra, expect: status)
    }

    /// A device root following the channel from the loopback feed.
    func device(_ name: String = "device", app: String = "com.example.notes") async throws -> String {
        let root = dir(name)
        try await clientctl([
            "init", "--root", root, "--app", app, "--channel", "stable", "--manifest-url", server.url("/stable/manifest.json").absoluteString,
            "--trust", ClientctlBinary.packagePath("Keys/test-signing.pub.pem"), "--shell-version", "1.0.0",
        ])
        return root
    }

    /// `clientctl install --root ROOT --from DIR --json` (status checked).
    func installFrom(_ root: String, _ from: String? = nil, expect status: Int32 = 0) async throws -> Subprocess.Result {
        try await clientctl(["install", "--root", root, "--from", from ?? stick, "--json"], expect: status)
    }

    func report(_ r: Subprocess.Result) throws -> InstallReport { try JSONDecoder().decode(InstallReport.self, from: r.stdout) }

    func status(_ root: String) async throws -> StatusReport {
        let r = try await clientctl(["status", "--root", root, "--json"])
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(StatusReport.self, from: r.stdout)
    }

    /// Every entry under `path`: its kind, size, modification time and content digest (a
    /// link: its target), so any write shows.
    static func snapshot(_ path: String) throws -> [String: String] {
        var out: [String: String] = [:]
        guard let names = FileManager.default.enumerator(atPath: path) else { return out }
        while let name = names.nextObject() as? String {
            let full = path + "/" + name
            var st = stat()
            guard lstat(full, &st) == 0 else { continue }
            let kind = st.st_mode & S_IFMT
            var text = "\(kind) \(st.st_size) \(st.st_mtim.tv_sec).\(st.st_mtim.tv_nsec) \(st.st_nlink)"
            // Content too, except for a huge (sparse) file, where size and time must do.
            if kind == S_IFREG, st.st_size <= 64 << 20 { text += " " + (try Digest.hex(.sha256, ofFileAt: full)) }
            if kind == S_IFLNK { text += " -> " + ((try? FileManager.default.destinationOfSymbolicLink(atPath: full)) ?? "?") }
            out[name] = text
        }
        return out
    }

    /// The device's store (`clients/`) and what its state runs.
    func held(_ root: String) async throws -> String {
        let s = try await status(root)
        return "\(try Self.snapshot(root + "/clients").sorted { $0.key < $1.key }) current=\(s.current) pending=\(s.pending ?? "-")"
    }
}

@Suite struct OfflineMediaTests {
    /// Export, then install from the folder: the release is staged, verified as online;
    /// the device sent nothing to its feed; the stick is exactly as it was; the import
    /// folder is gone; a stick left inserted causes no reinstall; once the version runs,
    /// `status` says it came from the media.
    @Test func anExportedReleaseInstallsFromTheStickWithNothingSentAndTheStickUntouched() async throws {
        let rig = try MediaRig()
        try await rig.publish("1.0.0")
        let exported = try await rig.export(["--offline-expires", "30d"])
        #expect(exported.output.contains("com.example.notes 1.0.0 on stable: exported to"), "\(exported.output)")
        let root = try await rig.device()
        rig.server.clearLog()
        let stick = try MediaRig.snapshot(rig.stick)
        #expect(stick.keys.contains("clientctl-media/com.example.notes/stable/media.json"))

        let first = try rig.report(try await rig.installFrom(root))
        #expect(first.result == .installed && first.version == "1.0.0", "\(first)")
        #expect(rig.server.requests.isEmpty, "an install from media sends nothing to the feed: \(rig.server.requests.map(\.target))")
        #expect(try MediaRig.snapshot(rig.stick) == stick, "the media is never written to")
        #expect(!FileManager.default.fileExists(atPath: root + "/media-import"), "the copies are removed when the check ends")

        let before = try await rig.held(root)
        let again = try rig.report(try await rig.installFrom(root))
        #expect(again.result == .upToDate, "\(again)")
        #expect(try await rig.held(root) == before, "a stick left inserted installs nothing again")

        try await rig.clientctl(["reload", "--root", root])
        try await rig.clientctl(["ack", "--root", root])
        let status = try await rig.status(root)
        #expect(status.current == RunningVersion("1.0.0"))
        #expect(status.currentSource?.hasPrefix("offline media exported ") == true, "\(String(describing: status.currentSource))")
        let text = try await rig.clientctl(["status", "--root", root])
        #expect(text.output.contains("\nfrom:            offline media exported "), "\(text.output)")
    }

    /// In a network namespace with no route (unshare -n), the install from media succeeds:
    /// no time server, feed or collector is asked. Its reports wait in the journal, in
    /// order, and the next online check delivers them.
    @Test func withNoNetworkAtAllTheInstallSucceedsAndItsReportsWaitForTheCollector() async throws {
        let rig = try MediaRig()
        try await rig.publish("1.0.0")
        _ = try await rig.export()
        let root = try await rig.device()
        let collector = try ReportCollectorStub()
        let path = root + "/config.json"
        var config = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        config["reportURL"] = collector.baseURL
        try JSONSerialization.data(withJSONObject: config, options: [.sortedKeys]).write(to: URL(fileURLWithPath: path))
        let offline = try await Subprocess.run(
            "/usr/bin/unshare", ["-n", ClientctlBinary.path, "install", "--root", root, "--from", rig.stick])
        #expect(offline.status == 0, "\(offline.errorOutput)")
        #expect(offline.output == "installed 1.0.0\n", "\(offline.output)")
        #expect(collector.received.isEmpty && rig.server.requests.isEmpty)
        let journal = try String(contentsOfFile: root + "/reports/journal.jsonl", encoding: .utf8)
        #expect(journal.contains("\"installed\""), "\(journal)")

        // Back on the network: the next check delivers what waited, every report once, in order.
        try await rig.clientctl(["install", "--root", root])
        let sent = try ReportDeliveryCommandTests.reports(collector)
        let types = sent.compactMap { $0["type"] as? String }
        #expect(types.contains("installed"), "\(types)")
        let seqs = sent.compactMap { $0["seq"] as? Int }
        #expect(seqs == Array(1...seqs.count), "\(seqs)")
    }

    /// Mixed sites: the newest valid release from either source wins, and media never
    /// downgrades. Online 1.1.0, then a stick of 1.0.0: kept. A stick of 1.2.0: taken.
    /// The feed still at 1.1.0 then decides nothing and is not an error.
    @Test func theNewestValidReleaseFromEitherSourceWinsAndMediaNeverDowngrades() async throws {
        let rig = try MediaRig()
        try await rig.publish("1.0.0")
        _ = try await rig.export(to: rig.dir("old-stick"))
        try await rig.publish("1.1.0")
        let root = try await rig.device()
        #expect(try rig.report(try await rig.clientctl(["install", "--root", root, "--json"])).version == "1.1.0")
        let before = try await rig.held(root)
        let old = try rig.report(try await rig.installFrom(root, rig.dir("old-stick")))
        #expect(old.result == .stale, "\(old)")
        #expect(old.message.hasPrefix("media never downgrades: release 1.0.0 in ") || old.message.contains("replay"), "\(old.message)")
        #expect(try await rig.held(root) == before, "an older stick changes nothing")

        // 1.2.0 is exported from a copy of the folder; the feed stays at 1.1.0.
        try FileManager.default.copyItem(atPath: rig.dir("rel"), toPath: rig.dir("rel2"))
        try await rig.clientctl([
            "publish", rig.sample, "--app", "com.example.notes", "--channel", "stable", "--version", "1.2.0", "--min-shell", "1.0.0",
            "--key", rig.key, "--out", rig.dir("rel2"),
        ])
        try await rig.clientctl(["export", "stable", "--from", rig.dir("rel2"), "--to", rig.stick, "--key", rig.key])
        #expect(try rig.report(try await rig.installFrom(root)).version == "1.2.0")
        // Issue 65: the feed's 1.1.0, published before the stick's 1.2.0, is behind the
        // stick, not a replay: up to date, and no check-refused report reaches the fleet.
        let collector = try ReportCollectorStub()
        let path = root + "/config.json"
        var config = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        config["reportURL"] = collector.baseURL
        try JSONSerialization.data(withJSONObject: config, options: [.sortedKeys]).write(to: URL(fileURLWithPath: path))
        let online = try rig.report(try await rig.clientctl(["install", "--root", root, "--json"]))
        #expect(online.result == .upToDate, "\(online)")
        #expect(online.message == "up to date: 1.2.0 from offline media is newer than the feed's release 1.1.0", "\(online.message)")
        let types = try ReportDeliveryCommandTests.reports(collector).compactMap { $0["type"] as? String }
        #expect(!types.contains("check-refused"), "\(types)")
        #expect(try await rig.status(root).pending == "1.2.0")
        // The feed's 1.1.0 re-signed later (not a replay): behind the stick, not an attack.
        try await rig.clientctl(["rollout", "set", "stable", "--out", rig.dir("rel"), "--key", rig.key, "--percent", "100"])
        let behind = try rig.report(try await rig.clientctl(["install", "--root", root, "--json"]))
        #expect(behind.result == .upToDate, "\(behind)")
        #expect(behind.message == "up to date: 1.2.0 from offline media is newer than the feed's release 1.1.0", "\(behind.message)")
        #expect(try await rig.status(root).pending == "1.2.0")
    }

    /// A release published with `--base-url` names its archive and patches by absolute
    /// URLs: export carries the files, and a device with no network at all installs them
    /// from the stick, sending nothing to the CDN the URLs name. An expired release is not
    /// exported without `--offline-expires`.
    @Test func absoluteURLsAreReadFromTheStickAndAnExpiredReleaseIsNotExported() async throws {
        let rig = try MediaRig()
        try await rig.publish("1.0.0", ["--base-url", "https://cdn.example.com/notes"])
        try await rig.publish("1.1.0", ["--base-url", "https://cdn.example.com/notes"])
        _ = try await rig.export()
        let root = try await rig.device()
        let r = try await Subprocess.run("/usr/bin/unshare", ["-n", ClientctlBinary.path, "install", "--root", root, "--from", rig.stick])
        #expect(r.status == 0 && r.output == "installed 1.1.0\n", "\(r.output) \(r.errorOutput)")

        try await rig.publish("1.2.0", ["--expires", "1d"])
        let expired = try await Subprocess.run(
            "faketime",
            ["-f", "+2d", ClientctlBinary.path, "export", "stable", "--from", rig.dir("rel"), "--to", rig.dir("late"), "--key", rig.key],
            environment: ["FAKETIME_DONT_FAKE_MONOTONIC": "1"])
        #expect(expired.status == 64, "\(expired.errorOutput)")
        #expect(expired.errorOutput.contains("release 1.2.0 expired at "), "\(expired.errorOutput)")
        #expect(expired.errorOutput.contains(": devices would refuse the media; publish again or give --offline-expires"))
        #expect(!FileManager.default.fileExists(atPath: rig.dir("late/clientctl-media/com.example.notes/stable")))
    }

    /// Time offline: the release expires online in a day; the media vouches for 30. Ten
    /// days later (the wall clock moved by faketime), the stick still installs and the
    /// feed's own manifest is stale; forty days later the stick is stale too. A device
    /// whose clock reads 1970 judges by its floor and takes good media.
    @Test func offlineExpiresHoldsForMediaOnlyAndIsJudgedOnTrustedTime() async throws {
        let rig = try MediaRig()
        try await rig.publish("1.0.0", ["--expires", "1d"])
        _ = try await rig.export(["--offline-expires", "30d"])
        let tooLong = try await rig.export(["--offline-expires", "2099-01-01T00:00:00Z"], to: rig.dir("other"), expect: 0)
        #expect(tooLong.status == 0, "without a signed root the release key alone vouches")

        func at(_ offset: String, _ root: String, from: String?) async throws -> InstallReport {
            let args = ["-f", offset, ClientctlBinary.path, "install", "--root", root, "--json"] + (from.map { ["--from", $0] } ?? [])
            let r = try await Subprocess.run("faketime", args, environment: ["FAKETIME_DONT_FAKE_MONOTONIC": "1"])
            #expect(r.status == 0, "\(r.errorOutput)")
            return try JSONDecoder().decode(InstallReport.self, from: r.stdout)
        }
        let later = try await rig.device("later")
        let feed = try await at("+10d", later, from: nil)
        #expect(feed.result == .stale, "online freshness is not loosened: \(feed)")
        let media = try await at("+10d", later, from: rig.stick)
        #expect(media.result == .installed && media.version == "1.0.0", "\(media)")

        let muchLater = try await rig.device("much-later")
        let stale = try await at("+40d", muchLater, from: rig.stick)
        #expect(stale.result == .stale && stale.message.contains("expired"), "\(stale)")
        #expect(try await rig.status(muchLater).pending == nil)

        let behind = try await rig.device("behind")
        let good = try await at("@1970-01-02 00:00:00", behind, from: rig.stick)
        #expect(good.result == .installed, "a clock in 1970 judges by the floor and takes good media: \(good)")
    }

    /// The export's folder is written through FAT (a real FAT image made by mkfs.vfat and
    /// written and read with mtools: this sandbox cannot loop-mount): its names survive,
    /// and the folder read back installs.
    @Test func mediaWrittenThroughAFATImageInstalls() async throws {
        let rig = try MediaRig()
        try await rig.publish("1.0.0")
        try await rig.publish("1.1.0")
        _ = try await rig.export()
        let image = rig.dir("stick.img")
        try await rig.run("/usr/bin/truncate", ["-s", "64M", image])
        try await rig.run("/usr/sbin/mkfs.vfat", ["-n", "CLIENTCTL", image])
        try await rig.run("/usr/bin/mcopy", ["-s", "-i", image, rig.stick + "/clientctl-media", "::/"])
        let listing = try await rig.run("/usr/bin/mdir", ["-/", "-b", "-i", image, "::/clientctl-media"])
        #expect(listing.output.contains("media.json"), "\(listing.output)")
        try FileManager.default.createDirectory(atPath: rig.dir("mounted"), withIntermediateDirectories: true)
        try await rig.run("/usr/bin/mcopy", ["-s", "-n", "-i", image, "::/clientctl-media", rig.dir("mounted")])
        let root = try await rig.device()
        let r = try rig.report(try await rig.installFrom(root, rig.dir("mounted")))
        #expect(r.result == .installed && r.version == "1.1.0", "\(r)")
    }
}

extension MediaRig {
    @discardableResult
    func run(_ tool: String, _ args: [String]) async throws -> Subprocess.Result {
        let r = try await Subprocess.run(tool, args)
        #expect(r.status == 0, "\(tool) \(args.joined(separator: " ")): \(r.errorOutput)")
        return r
    }
}

import ArchivePublishing
import ClientFoundation
import ClientUpdater
import ClientUpdaterHTTP
import DeviceSetup
import Foundation
import SafeArchive
import SignedArchive
import TestSupport
import Testing

/// Issue 10, point 2: publish, extraction and the organizer share one rule for file names
/// (``ServedPathRule``), so a release that installs can always be served; a version left
/// by an older clientctl that still cannot be organized fails like a crashed trial.
@Suite struct ServedNameRuleTests {
    /// Names the organizer cannot serve under their own name, and names it can.
    static let refused = ["what?.js", "%2e%2e", "%2E%2e.js", "%3F.js", "%5C.js", "%00.js", "a%2Fb", "dir/%2e%2e/x.js", "%41.js"]
    static let accepted = ["app.js", "a b.js", "é.js", "100%.js", "a#b.js", "dir/x.js", "a"]

    static func client(_ tmp: TemporaryDirectory, with name: String) throws -> String {
        let dir = tmp("client-\(UUID().uuidString)")
        return try ReleaseFolder.makeClient(at: dir, version: "1.1.0", extraFiles: [name: "x"])
    }

    @Test(arguments: refused + accepted)
    func publishExtractionAndOrganizerAgree(_ name: String) throws {
        let tmp = try TemporaryDirectory("served-name")
        let expectAccepted = Self.accepted.contains(name)
        // publish's scan of the source folder
        let scanned = Result { try SourceTree.scan(try Self.client(tmp, with: name)) }
        #expect(((try? scanned.get()) != nil) == expectAccepted, "publish of \(name): \(scanned)")
        // extraction's entry rule
        let verdict = EntryRule().check(Array(name.utf8), isDirectory: false)
        if case .accepted = verdict {
            #expect(expectAccepted, "extraction accepted \(name)")
        } else {
            #expect(!expectAccepted, "extraction: \(verdict)")
        }
        // the device's organizer, given the archive channel's assets of an unpacked tree
        let layout = RootLayout(root: tmp("root"))
        let config = try DeviceConfig(
            app: "com.example.notes", channelKind: .signedArchive,
            settings: ArchiveSettings(
                channel: "stable", manifestURL: "file:///releases/stable/manifest.json",
                trustedKeys: [try ReleaseFolder.testPublicKeyPEM()]),
            shellVersion: Version(1, 0, 0))
        let channel = try ArchiveChannel(
            layout: layout, config: config, downloader: Downloader(transport: DefaultTransport(config: config, root: layout.root)), logger: .quiet)
        let tree = try Self.client(tmp, with: name)
        let organized = Result {
            let assets = try channel.servedAssets(for: InstalledVersion(id: "1.1.0", directory: tree))
            return try Organizer(layout: layout).organize(id: "1.1.0", assets: assets)
        }
        #expect(((try? organized.get()) != nil) == expectAccepted, "organizer with \(name): \(organized)")
        if expectAccepted {
            #expect(FileManager.default.fileExists(atPath: layout.serving + "/1.1.0/" + name), "\(name) is not served under its name")
        }
        // and the rule itself
        #expect((ServedPathRule.problem(withStoredPath: name) == nil) == expectAccepted)
    }

    @Test func publishRefusesAnUnservableNameAndWritesNothing() async throws {
        let rig = try await ReleaseRig(label: "served-publish")
        let dir = try Self.client(rig.tmp, with: "what?.js")
        let result = try await ClientctlBinary.run([
            "publish", dir, "--app", rig.app, "--channel", "stable", "--version", "1.1.0",
            "--min-shell", "1.0.0", "--key", rig.key + ".pem", "--out", rig.releases,
        ])
        #expect(result.status == 65, "\(result.errorOutput)")
        #expect(result.errorOutput.contains("what?.js") && result.errorOutput.contains("'?'"), "\(result.errorOutput)")
        #expect(!FileManager.default.fileExists(atPath: rig.releases + "/stable/manifest.json"))
    }

    @Test(arguments: ["what?.js", "%2e%2e", "a%2Fb"])
    func installRefusesAnUnservableNameBeforeStaging(_ name: String) async throws {
        let f = try DeviceFixture()
        try f.publish("1.0.0")
        #expect(try await ClientctlBinary.run(["install", "--root", f.layout.root]).status == 0)
        let index = HostileArchive.TarEntry.file("index.html", "<html><head></head><body>1.1.0</body></html>")
        var entries = [index, HostileArchive.TarEntry.file(name, "x")]
        if name == "a%2Fb" { entries.append(HostileArchive.TarEntry.file("a", "y")) }
        try f.releases.publish("1.1.0", archive: Data(HostileArchive.gzip(HostileArchive.tar(entries))))
        let before = try f.snapshot()
        let result = try await ClientctlBinary.run(["install", "--root", f.layout.root])
        #expect(result.status == 65, "\(result.errorOutput)")
        #expect(result.errorOutput.contains("release 1.1.0") && result.errorOutput.contains(name), "\(result.errorOutput)")
        let after = try f.snapshot()
        #expect(after == before, "\(after.difference(from: before))")
    }

    /// A version installed by an older clientctl holds `what?.js`: `serve` starts anyway,
    /// the version fails like a crashed trial (retry list) and the last good one is served.
    @Test func aVersionThatCannotBeOrganizedNeverStopsServe() async throws {
        let f = try DeviceFixture()
        let root = f.layout.root
        try f.publish("1.0.0")
        for command in [["install"], ["reload"], ["ack"]] {
            let r = try await ClientctlBinary.run(command + ["--root", root])
            #expect(r.status == 0, "\(command): \(r.errorOutput)")
        }
        try f.publish("1.1.0")
        #expect(try await ClientctlBinary.run(["install", "--root", root]).status == 0)
        try Data("x".utf8).write(to: URL(fileURLWithPath: f.layout.clientDirectory(Version(1, 1, 0)) + "/what?.js"))

        let serve = try await ServeProcess(root: root, scratch: f.tmp.path)
        let page = try await serve.get("/")
        #expect(page.status == 200 && page.body.contains(">1.0.0<"), "\(page)")
        #expect(serve.stop() == 0)
        #expect(serve.stderr.contains("1.1.0 cannot be organized for serving; will be retried once; reverted to 1.0.0"), "\(serve.stderr)")
        let state = StateStore.load(f.layout)
        #expect(state.current == "1.0.0" && state.retry == ["1.1.0"] && state.pending == nil, "\(state)")
    }
}

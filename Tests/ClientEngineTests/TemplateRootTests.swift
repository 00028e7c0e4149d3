import ClientEngine
import ClientUpdater
import DeviceSetup
import Foundation
import ReleaseSigning
import SignedManifest
import TestSupport
import Testing

/// A packaged app's roots, made and kept from its template (`/usr/share/PKG`): the first
/// start creates the root as `init` would, every start applies the package's shell version
/// and seed, and a broken template never touches a root that exists.
@Suite struct TemplateRootTests {
    static func makeTemplate(
        at folder: String, shell: String = "1.0.0", manifestURL: String = "http://127.0.0.1:9/stable/manifest.json",
        app: String = "com.example.notes", edit: (inout [String: Any]) -> Void = { _ in }
    ) throws {
        try TemplateFolder.make(at: folder, shell: shell, manifestURL: manifestURL, app: app, edit: edit)
    }

    @Test func theFirstStartCreatesTheRootAsInitWouldAndTheNextChangesNothing() async throws {
        let tmp = try TemporaryDirectory("template-first")
        try Self.makeTemplate(at: tmp("share"))
        let (outcome, template) = try await TemplateRoot.prepare(template: tmp("share"), root: tmp("home/.local/share/com.example.notes"))
        #expect(outcome == .created)
        #expect(template?.checkIntervalSeconds == 600 && template?.name == "Notes")
        let config = try DeviceConfig.load(RootLayout(root: tmp("home/.local/share/com.example.notes")))
        #expect(config.app == "com.example.notes" && config.shellVersion.description == "1.0.0")
        #expect(config.embeddedPath == tmp("share/www"), "the seed is the package's, read in place")
        let again = try await TemplateRoot.prepare(template: tmp("share"), root: tmp("home/.local/share/com.example.notes"))
        #expect(again.outcome == .unchanged)
    }

    @Test func twoFirstStartsAtOnceMakeOneRoot() async throws {
        let tmp = try TemporaryDirectory("template-race")
        try Self.makeTemplate(at: tmp("share"))
        let root = tmp("root")
        let outcomes = try await withThrowingTaskGroup(of: TemplateRoot.Outcome.self) { group in
            for _ in 0..<6 { group.addTask { try await TemplateRoot.prepare(template: tmp("share"), root: root).outcome } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(outcomes.filter { $0 == .created }.count == 1, "\(outcomes)")
        #expect(outcomes.filter { $0 == .unchanged }.count == 5, "\(outcomes)")
        let engine = try DeviceEngine.open(root: root, options: .init(logger: .quiet))
        #expect(try await engine.updater.status().deviceId != nil)
    }

    /// The seeds' shell update, driven by a package upgrade: the downloaded version built
    /// for the old shell goes, and the release that needs the new shell becomes installable.
    @Test func anUpgradedTemplateIsTheRootsShellUpdate() async throws {
        let device = try DeviceFixture()
        try device.publish("1.0.0")
        try device.publish("2.0.0", minShell: "2.0.0")
        let url = device.server.url("/stable/manifest.json").absoluteString
        let root = device.tmp("packaged-root")
        try Self.makeTemplate(at: device.tmp("share"), shell: "1.0.0", manifestURL: url)
        #expect(try await TemplateRoot.prepare(template: device.tmp("share"), root: root).outcome == .created)
        var engine = try DeviceEngine.open(root: root, options: .init(logger: .quiet))
        _ = try await engine.updater.start(bridge: nil)
        let first = try await engine.updater.install()
        #expect(first.version == "1.0.0", "shell 1.0.0 cannot take 2.0.0: \(first.message)")
        await engine.updater.shutdown()

        try Self.makeTemplate(at: device.tmp("share"), shell: "2.0.0", manifestURL: url)
        let upgraded = try await TemplateRoot.prepare(template: device.tmp("share"), root: root)
        #expect(upgraded.outcome == .shellUpdated(from: "1.0.0", to: "2.0.0"))
        engine = try DeviceEngine.open(root: root, options: .init(logger: .quiet))
        let started = try await engine.updater.start(bridge: nil)
        #expect(started.shellUpdateReset, "the versions downloaded for shell 1.0.0 are dropped")
        #expect(try await engine.updater.status().installed.isEmpty)
        let second = try await engine.updater.install()
        #expect(second.version == "2.0.0", "\(second.message)")
        await engine.updater.shutdown()
    }

    @Test(arguments: [
        ("not json", "a file that is not JSON"),
        ("insecure", "http: to a host that is not loopback"),
        ("escape", "a seed path out of the template folder"),
        ("format", "another format"),
        ("origin", "an origin the shell does not know"),
    ])
    func aBrokenTemplateNeverTouchesAnExistingRoot(breakage: String, _ what: String) async throws {
        let tmp = try TemporaryDirectory("template-broken")
        try Self.makeTemplate(at: tmp("share"))
        _ = try await TemplateRoot.prepare(template: tmp("share"), root: tmp("root"))
        let before = try TreeSnapshot(tmp("root"))
        try Self.break(tmp("share"), breakage)
        let (outcome, _) = try await TemplateRoot.prepare(template: tmp("share"), root: tmp("root"))
        guard case .templateRefused(let why) = outcome else {
            Issue.record("\(what): \(outcome)")
            return
        }
        #expect(why.contains(tmp("share")), "\(why)")
        #expect(try TreeSnapshot(tmp("root")) == before, "\(what): the root is left exactly as it was")
        // Without a root there is nothing to fall back on: refused, nothing created.
        let error = try await #require(throws: EngineError.self) { try await TemplateRoot.prepare(template: tmp("share"), root: tmp("fresh")) }
        #expect(error.code == .configInvalid, "\(error.message)")
        #expect(!FileManager.default.fileExists(atPath: tmp("fresh")))
    }

    static func `break`(_ folder: String, _ breakage: String) throws {
        switch breakage {
        case "not json": try Data("{\"format\":".utf8).write(to: URL(fileURLWithPath: folder + "/" + DeviceTemplate.fileName))
        case "insecure": try makeTemplate(at: folder, manifestURL: "http://updates.example.com/stable/manifest.json")
        case "escape": try makeTemplate(at: folder) { $0["seed"] = "../../etc" }
        case "origin": try makeTemplate(at: folder) { $0["origin"] = "https" }
        default: try makeTemplate(at: folder) { $0["format"] = "clientctl-device-template-v0" }
        }
    }

    /// A template's signed root is taken only as the verified successor of the root the
    /// device trusts; an older one never replaces the newer root the device holds.
    @Test func aTemplatesTrustRootIsAdoptedOnlyAsTheNextVerifiedRoot() async throws {
        let tmp = try TemporaryDirectory("template-trust")
        let layout = RootLayout(root: tmp("root"))
        try Self.makeTemplate(at: tmp("share"))
        #expect(try await TemplateRoot.prepare(template: tmp("share"), root: layout.root).outcome == .created)
        let rootKeys = try (0..<2).map { _ in try Ed25519.PrivateKey.generate() }
        var draft = RootDraft(
            app: "com.example.notes", channel: "stable", expires: Date().addingTimeInterval(365 * 86_400),
            rootKeys: rootKeys.map(\.publicKey), rootThreshold: 2, releaseKeys: [try ReleaseFolder.testKey().publicKey],
            releaseThreshold: 1)
        // Root 1: vouched for by the key the device trusts, accepted by its own root keys.
        for key in [try ReleaseFolder.testKey()] + rootKeys { try await draft.sign(with: key) }
        let root1 = try draft.root()
        func offer(_ root: TrustRoot) async throws -> TemplateRoot.Outcome {
            try Data(root.jsonBytes()).write(to: URL(fileURLWithPath: tmp("share/trust/root.json")))
            try Self.makeTemplate(at: tmp("share")) {
                $0["trust"] = [String]()
                $0["trustRoot"] = "trust/root.json"
            }
            return try await TemplateRoot.prepare(template: tmp("share"), root: layout.root).outcome
        }
        #expect(try await offer(root1) == .unchanged)
        #expect(FileManager.default.fileExists(atPath: layout.trustRoot(1)), "root 1 follows the device's key")

        var next = RootDraft.successor(of: root1, expires: Date().addingTimeInterval(365 * 86_400))
        for key in rootKeys { try await next.sign(with: key) }
        _ = try await offer(try next.root())
        #expect(FileManager.default.fileExists(atPath: layout.trustRoot(2)))
        let held = try TreeSnapshot(layout.trust)
        _ = try await offer(root1)
        #expect(try TreeSnapshot(layout.trust) == held, "an older template root changes nothing")
        // A root the device's keys never vouched for is not taken either.
        let strangers = try (0..<2).map { _ in try Ed25519.PrivateKey.generate() }
        var forged = RootDraft.successor(of: try next.root(), expires: Date().addingTimeInterval(365 * 86_400))
        for key in strangers { try await forged.sign(with: key) }
        _ = try await offer(try forged.root())
        #expect(try TreeSnapshot(layout.trust) == held && !FileManager.default.fileExists(atPath: layout.trustRoot(3)))
    }

    @Test func aRootOfAnotherAppIsRefusedAndKept() async throws {
        let tmp = try TemporaryDirectory("template-other")
        try Self.makeTemplate(at: tmp("other"), app: "com.example.other")
        _ = try await TemplateRoot.prepare(template: tmp("other"), root: tmp("root"))
        let before = try TreeSnapshot(tmp("root"))
        try Self.makeTemplate(at: tmp("share"))
        let error = try await #require(throws: EngineError.self) { try await TemplateRoot.prepare(template: tmp("share"), root: tmp("root")) }
        #expect(error.code == .configInvalid && error.message.contains("com.example.other"), "\(error.message)")
        #expect(try TreeSnapshot(tmp("root")) == before)
    }

    @Test func theUserRootFollowsTheXDGBaseDirectorySpecification() throws {
        let template = DeviceTemplate(
            app: "com.example.notes", name: "Notes", channel: "stable", manifestURL: "https://x.example/m.json", trust: ["k"],
            trustRoot: nil, shellVersion: "1.0.0")
        #expect(try template.userRoot(environment: ["HOME": "/home/ann"]) == "/home/ann/.local/share/com.example.notes")
        #expect(try template.userRoot(environment: ["HOME": "/home/ann", "XDG_DATA_HOME": "/data"]) == "/data/com.example.notes")
        // A relative XDG_DATA_HOME is invalid by the spec and ignored.
        #expect(try template.userRoot(environment: ["HOME": "/home/ann", "XDG_DATA_HOME": "rel"]) == "/home/ann/.local/share/com.example.notes")
        #expect(throws: DeviceSetupError.self) { try template.userRoot(environment: [:]) }
        #expect(try TemplateRoot.rootPath(explicit: "/srv/root", template: "/nowhere") == "/srv/root", "--root wins")
    }
}

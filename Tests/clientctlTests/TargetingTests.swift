import ClientFoundation
import ClientUpdater
import Foundation
import SignedManifest
import StrictJSON
import TestSupport
import Testing

/// Who takes which release, as users run it (docs/targeting.md): releases published and
/// edited by the built `clientctl` (`publish --target/--rollout/--alongside`, `rollout set`,
/// `rollout pin|unpin`), hosted on 127.0.0.1, and device roots made with `init --label`,
/// changed with `label set`, checked with `install` and explained by `status --explain`.
struct TargetingRig {
    let dir: TemporaryDirectory
    let server: LoopbackHTTPServer
    let sample = ClientctlBinary.packagePath("Fixtures/sample-client")
    let key = ClientctlBinary.packagePath("Keys/test-signing.pem")
    var channelFolder: String { dir("rel/stable") }

    init() throws {
        dir = try TemporaryDirectory("targeting")
        try FileManager.default.createDirectory(atPath: dir("rel"), withIntermediateDirectories: true)
        server = try LoopbackHTTPServer(handler: LoopbackHTTPServer.folder(dir("rel")))
    }

    @discardableResult
    func clientctl(_ args: [String], expect status: Int32 = 0, sourceLocation: SourceLocation = #_sourceLocation) async throws
        -> Subprocess.Result
    {
        let r = try await ClientctlBinary.run(args)
        #expect(r.status == status, "clientctl \(args.joined(separator: " ")): \(r.errorOutput)", sourceLocation: sourceLocation)
        return r
    }

    func publish(_ version: String, _ extra: [String] = [], expect status: Int32 = 0) async throws {
        try await clientctl(
            [
                "publish", sample, "--app", "com.example.notes", "--channel", "stable", "--version", version, "--min-shell", "1.0.0",
                "--key", key, "--out", dir("rel"),
            ] + extra, expect: status)
    }

    /// `clientctl rollout ARGS… --out rel --key k.pem`.
    @discardableResult
    func rollout(_ args: [String], expect status: Int32 = 0) async throws -> Subprocess.Result {
        try await clientctl(["rollout"] + args + ["--out", dir("rel"), "--key", key], expect: status)
    }

    /// A device root `name` with `labels` (`init --label`), following the channel.
    func device(_ name: String, labels: [String]) async throws -> String {
        let root = dir(name)
        try await clientctl(
            [
                "init", "--root", root, "--app", "com.example.notes", "--channel", "stable",
                "--manifest-url", server.url("/stable/manifest.json").absoluteString,
                "--trust", ClientctlBinary.packagePath("Keys/test-signing.pub.pem"), "--shell-version", "1.0.0",
            ] + labels.flatMap { ["--label", $0] })
        return root
    }

    /// The channel's `manifest.json` (or another file of the folder), verified.
    func manifest(_ name: String = "manifest.json") throws -> Manifest {
        let data = try Data(contentsOf: URL(fileURLWithPath: channelFolder + "/" + name))
        return try ManifestVerifier(trustedKeys: [try ReleaseFolder.testKey().publicKey]).verify(bytes: Array(data)).get()
    }

    /// `clientctl install --root ROOT --json`.
    func install(_ root: String) async throws -> InstallReport {
        let r = try await clientctl(["install", "--root", root, "--json"])
        return try JSONDecoder().decode(InstallReport.self, from: r.stdout)
    }

    func status(_ root: String, explain: Bool = false) async throws -> StatusReport {
        let r = try await clientctl(["status", "--root", root, "--json"] + (explain ? ["--explain"] : []))
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(StatusReport.self, from: r.stdout)
    }

    /// The newest version the device holds (pending, else current).
    func holds(_ root: String) async throws -> String? {
        let s = try await status(root)
        return s.pending ?? s.installed.last?.version
    }
}

@Suite struct TargetingTests {
    /// A release for stores 12 and 14: their devices take it, the store-7 device keeps what
    /// it runs and says why with its own label; relabelled, it takes the release at its next
    /// check, once, and a device relabelled out of the target keeps what it has.
    @Test func aTargetedReleaseGoesOnlyWhereItsTargetAdmitsAndALabelChangeMovesADeviceOnce() async throws {
        let rig = try TargetingRig()
        try await rig.publish("1.0.0")
        let a = try await rig.device("a", labels: ["store=12", "ring=stable"])
        let b = try await rig.device("b", labels: ["store=14"])
        let c = try await rig.device("c", labels: ["store=7"])
        for root in [a, b, c] { #expect(try await rig.install(root).version == "1.0.0") }

        try await rig.publish("1.1.0", ["--target", "store in (12,14)"])
        let m = try rig.manifest()
        #expect(m.target?.description == "store in (12, 14)", "publish signs the canonical text")
        #expect(try await rig.install(a).version == "1.1.0")
        #expect(try await rig.install(b).version == "1.1.0")
        let skipped = try await rig.install(c)
        #expect(skipped.result == .skipped)
        #expect(skipped.message == "not in the target of release 1.1.0 `store in (12, 14)`: store=7; this device keeps what it runs")
        let explained = try await rig.status(c, explain: true)
        #expect(explained.explanation?.contains { $0.hasPrefix("not for this device: not in the target of release 1.1.0") } == true)
        let held = try await rig.holds(c)
        #expect(explained.labels == ["store": "7"] && held == "1.0.0")

        try await rig.clientctl(["label", "set", "--root", c, "store=12"])
        let moved = try await rig.install(c)
        #expect(moved.version == "1.1.0", "\(moved)")
        #expect(try await rig.install(c).result == .upToDate, "it moves once")

        try await rig.clientctl(["label", "set", "--root", a, "store=99"])
        let out = try await rig.install(a)
        #expect(out.result == .upToDate, "a device outside the target keeps what it runs: \(out)")
        #expect(try await rig.holds(a) == "1.1.0")
    }

    /// 1.4.0 for the fleet and 1.5.0-rc.1 for half of beta, at once: each beta device
    /// takes the rc when its place in the rc's draw is in the first half and 1.4.0
    /// otherwise; a stable device takes 1.4.0. A second rc for the other half of beta is
    /// placed after the first in the same draw, so the two never share a device.
    @Test func twoReleasesAtOnceEachDeviceTakesTheNewestThatIsForIt() async throws {
        let rig = try TargetingRig()
        try await rig.publish("1.4.0")
        try await rig.publish("1.5.0-rc.1", ["--target", "ring = beta", "--rollout", "50", "--alongside", "1.4.0"])
        let head = try rig.manifest()
        #expect(head.alongside.map(\.version.description) == ["1.4.0"] && head.rollout?.places(percent: 50) == 0..<5_000)

        var roots: [(root: String, beta: Bool)] = []
        for i in 0..<6 { roots.append((try await rig.device("beta\(i)", labels: ["ring=beta"]), true)) }
        for i in 0..<2 { roots.append((try await rig.device("stable\(i)", labels: ["ring=stable"]), false)) }
        var firstHalf = 0
        for (root, beta) in roots {
            let id = try #require(try await rig.status(root).deviceId)
            let inRC = beta && Rollout.bucket(channel: "stable", draw: "1.5.0-rc.1", deviceId: id) < 5_000
            if inRC { firstHalf += 1 }
            let report = try await rig.install(root)
            #expect(report.version == (inRC ? "1.5.0-rc.1" : "1.4.0"), "\(root) place \(id): \(report)")
        }

        try await rig.publish("1.5.0-rc.2", ["--target", "ring = beta", "--rollout", "50", "--alongside", "1.5.0-rc.1", "--alongside", "1.4.0"])
        let rc2 = try rig.manifest()
        #expect(rc2.rollout?.draw == "1.5.0-rc.1" && rc2.rollout?.from == 50, "placed after rc.1 in rc.1's draw")
        var second = 0
        for (root, beta) in roots {
            let id = try #require(try await rig.status(root).deviceId)
            let place = Rollout.bucket(channel: "stable", draw: "1.5.0-rc.1", deviceId: id)
            let report = try await rig.install(root)
            if beta, place >= 5_000 {
                second += 1
                #expect(report.version == "1.5.0-rc.2", "\(report)")
            } else {
                #expect(report.result == .upToDate, "a device of rc.1's half, or stable, keeps its release: \(report)")
            }
        }
        #expect(firstHalf + second == 6, "every beta device is in exactly one half")
        // Overlapping places of the same draw are refused before anything is written.
        let before = try Data(contentsOf: URL(fileURLWithPath: rig.channelFolder + "/manifest.json"))
        try await rig.publish(
            "1.5.0-rc.3", ["--rollout", "10", "--draw", "1.5.0-rc.1", "--draw-from", "45", "--alongside", "1.5.0-rc.2"], expect: 64)
        #expect(try Data(contentsOf: URL(fileURLWithPath: rig.channelFolder + "/manifest.json")) == before)
    }

    /// The lobby's devices pinned to 1.3.2 stay on it through two later releases (a new
    /// lobby device takes 1.3.2 itself), the others move on; unpinned, the lobby moves.
    @Test func aPinnedDeviceStaysPinnedThroughLaterReleases() async throws {
        let rig = try TargetingRig()
        try await rig.publish("1.3.2")
        let lobby = try await rig.device("lobby", labels: ["site=lobby"])
        let office = try await rig.device("office", labels: ["site=office"])
        for root in [lobby, office] { #expect(try await rig.install(root).version == "1.3.2") }
        let pinned = try await rig.rollout(["pin", "stable", "--target", "site=lobby", "--version", "1.3.2"])
        #expect(pinned.output.contains("pinned to 1.3.2: site = lobby"), "\(pinned.output)")

        for version in ["1.4.0", "1.5.0"] {
            try await rig.publish(version)
            let held = try await rig.install(lobby)
            #expect(
                held.result == .upToDate
                    && held.message == "up to date: 1.3.2 is installed (pinned to 1.3.2 by the pin `site = lobby` "
                        + "(site=lobby): release \(version) is not for this device; it stays at most on 1.3.2)",
                "\(held)")
            #expect(try await rig.install(office).version == version)
        }
        let fresh = try await rig.device("lobby2", labels: ["site=lobby"])
        #expect(try await rig.install(fresh).version == "1.3.2", "a new lobby device takes the pinned release")
        let explained = try await rig.status(lobby, explain: true).explanation ?? []
        #expect(explained.contains { $0.hasPrefix("up to date: 1.3.2 is installed (pinned to 1.3.2 by the pin") }, "\(explained)")

        try await rig.rollout(["unpin", "stable", "--target", "site = lobby"])
        #expect(try await rig.install(lobby).version == "1.5.0")
        try await rig.rollout(["unpin", "stable", "--all"], expect: 0)
        let none = try await rig.rollout(["unpin", "stable", "--target", "site = lobby"], expect: 66)
        #expect(none.errorOutput.contains("release 1.5.0 has no pin of the target 'site = lobby'"))
    }

    /// A stale CDN answer cannot bring a release to a device outside its current target:
    /// yesterday's manifest without the target is a replay, and an older signing of a
    /// release offered beside the newest is not the one the newest names.
    @Test func aStaleAnswerCannotMoveADeviceOutsideItsTarget() async throws {
        let rig = try TargetingRig()
        try await rig.publish("1.0.0")
        let seven = try await rig.device("seven", labels: ["store=7", "ring=stable"])
        #expect(try await rig.install(seven).version == "1.0.0")
        try await rig.publish("2.0.0")
        let everyone = try Data(contentsOf: URL(fileURLWithPath: rig.channelFolder + "/manifest.json"))
        let everyoneIndex = try Data(contentsOf: URL(fileURLWithPath: rig.channelFolder + "/index.json"))
        try await rig.rollout(["set", "stable", "--target", "store = 12"])
        #expect(try await rig.install(seven).result == .skipped)
        try everyone.write(to: URL(fileURLWithPath: rig.channelFolder + "/manifest.json"))
        let stale = try await rig.install(seven)
        #expect(stale.result == .stale && stale.message.contains("a stale cache or a replay"), "\(stale)")
        #expect(try await rig.holds(seven) == "1.0.0")

        // 2.0.0 (for store 12) offered beside a beta release; the index then serves the
        // older signing of 2.0.0, for every device: the digest does not match, nothing moves.
        try await rig.publish("2.1.0-rc.1", ["--target", "ring = beta", "--alongside", "2.0.0"])
        var index = try ReleaseIndex.parse(Data(contentsOf: URL(fileURLWithPath: rig.channelFolder + "/index.json")))
        let old = try ReleaseIndex.parse(everyoneIndex).releases.first { $0["version"] == .string("2.0.0") }
        index.releases = index.releases.map { $0["version"] == .string("2.0.0") ? (old ?? $0) : $0 }
        try Data(index.jsonBytes()).write(to: URL(fileURLWithPath: rig.channelFolder + "/index.json"))
        let kept = try await rig.install(seven)
        #expect(kept.result == .skipped && kept.message.contains("not in the target of release 2.1.0-rc.1"), "\(kept)")
        #expect(try await rig.holds(seven) == "1.0.0")
    }

    /// `prune --keep 1` keeps what the newest manifest names besides itself: the release
    /// offered beside it and the pinned one, with their archives; devices can still take them.
    @Test func pruneKeepsTheReleasesTheNewestOffersBesideItAndPins() async throws {
        let rig = try TargetingRig()
        for version in ["1.0.0", "1.1.0"] { try await rig.publish(version) }
        try await rig.rollout(["pin", "stable", "--target", "site = lobby", "--version", "1.0.0"])
        try await rig.publish("1.2.0")
        try await rig.publish("1.3.0", ["--target", "ring = beta", "--alongside", "1.2.0"])
        try await rig.clientctl(["prune", "stable", "--out", rig.dir("rel"), "--keep", "1"])
        let index = try ReleaseIndex.parse(Data(contentsOf: URL(fileURLWithPath: rig.channelFolder + "/index.json")))
        #expect(index.releases.compactMap { $0["version"]?.stringValue } == ["1.3.0", "1.2.0", "1.0.0"], "1.1.0 alone is pruned")
        for kept in ["v1.0.0.tar.gz", "v1.2.0.tar.gz", "v1.3.0.tar.gz"] {
            #expect(FileManager.default.fileExists(atPath: rig.channelFolder + "/" + kept), "\(kept)")
        }
        #expect(!FileManager.default.fileExists(atPath: rig.channelFolder + "/v1.1.0.tar.gz"))
        let lobby = try await rig.device("lobby", labels: ["site=lobby"])
        let stable = try await rig.device("stable", labels: ["ring=stable"])
        #expect(try await rig.install(lobby).version == "1.0.0")
        #expect(try await rig.install(stable).version == "1.2.0")
    }

    /// A target changed after signing fails the signature: refused, nothing written.
    @Test func aTamperedTargetIsRefusedAndChangesNothing() async throws {
        let rig = try TargetingRig()
        try await rig.publish("1.0.0")
        let seven = try await rig.device("seven", labels: ["store=7"])
        #expect(try await rig.install(seven).version == "1.0.0")
        try await rig.publish("1.1.0", ["--target", "store = 12"])
        let path = rig.channelFolder + "/manifest.json"
        let text = try String(contentsOfFile: path, encoding: .utf8)
        try Data(text.replacingOccurrences(of: "\"store = 12\"", with: "\"store = 7\"").utf8).write(to: URL(fileURLWithPath: path))
        let before = try TreeSnapshot(seven)
        let refused = try await rig.clientctl(["install", "--root", seven], expect: 65)
        #expect(refused.errorOutput.contains("signature"), "\(refused.errorOutput)")
        #expect(try TreeSnapshot(seven) == before, "nothing installed, nothing remembered")
    }

    /// A `--target` of under 4,096 bytes whose canonical text (what the manifest carries)
    /// is longer is a usage error: one line naming it and why, exit 64, nothing signed, for
    /// `publish` and `rollout set` alike (it exited 65 once signed: issue 75).
    @Test func aTargetWhoseCanonicalTextIsTooLongIsAUsageError() async throws {
        let rig = try TargetingRig()
        try await rig.publish("1.0.0")
        let compact = (0..<440).map { "k=\($0)" }.joined(separator: " or ")
        #expect(compact.utf8.count < 4096)
        let tree = try TreeSnapshot(rig.dir("rel"))
        let published = try await rig.clientctl(
            [
                "publish", rig.sample, "--app", "com.example.notes", "--channel", "stable", "--version", "1.1.0", "--min-shell", "1.0.0",
                "--key", rig.key, "--out", rig.dir("rel"), "--target", compact,
            ], expect: 64)
        let set = try await rig.rollout(["set", "stable", "--target", compact], expect: 64)
        let canonical = (0..<440).map { "k = \($0)" }.joined(separator: " or ").utf8.count
        for refused in [published, set] {
            // argument-parser's own lines (usage, help) follow its error's line.
            let line = refused.errorOutput.split(separator: "\n").first ?? ""
            #expect(line.hasPrefix("Error: --target: target 'k=0 or k=1 or k=2 or "), "\(refused.errorOutput)")
            #expect(
                line.hasSuffix("': its canonical text (one space between tokens, as the manifest carries it) is \(canonical) bytes, at most 4096"),
                "\(refused.errorOutput)")
        }
        #expect(try TreeSnapshot(rig.dir("rel")) == tree, "nothing signed or written")
    }

    /// Labels as the device owner sets them: bad ones refused with one line, exit 64, and
    /// config.json left byte for byte; unset of a key that is not set is a note.
    @Test func labelCommandsRefuseBadLabelsAndWriteNothing() async throws {
        let rig = try TargetingRig()
        let made = try await rig.clientctl(
            [
                "init", "--root", rig.dir("bad"), "--app", "com.example.notes", "--channel", "stable",
                "--manifest-url", rig.server.url("/stable/manifest.json").absoluteString,
                "--trust", ClientctlBinary.packagePath("Keys/test-signing.pub.pem"), "--shell-version", "1.0.0", "--label", "Store=1",
            ], expect: 64)
        #expect(made.errorOutput.contains("label key 'Store': must start with a lowercase letter"), "\(made.errorOutput)")
        #expect(!FileManager.default.fileExists(atPath: rig.dir("bad")))

        let root = try await rig.device("dev", labels: ["store=12"])
        let config = try Data(contentsOf: URL(fileURLWithPath: root + "/config.json"))
        for (label, why) in [
            ("ring", "label 'ring': expected KEY=VALUE"), ("id=1", "label key 'id': is reserved by the target language"),
            ("ring=a b", "has the character ' '"), ("store=12=1", "expected KEY=VALUE"),
        ] {
            let r = try await rig.clientctl(["label", "set", "--root", root, label], expect: 64)
            #expect(r.errorOutput.contains(why) && r.errorOutput.split(separator: "\n").count == 1, "\(label): \(r.errorOutput)")
        }
        let many = (0..<32).map { "k\($0)=v" }
        let tooMany = try await rig.clientctl(["label", "set", "--root", root] + many, expect: 64)
        #expect(tooMany.errorOutput.contains("at most 32 labels"), "\(tooMany.errorOutput)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: root + "/config.json")) == config, "nothing written")

        try await rig.clientctl(["label", "set", "--root", root, "ring=beta", "site=lobby"])
        let listed = try await rig.clientctl(["label", "list", "--root", root])
        #expect(listed.output == "ring=beta\nsite=lobby\nstore=12\n")
        let unset = try await rig.clientctl(["label", "unset", "--root", root, "site", "nope"])
        #expect(unset.errorOutput.contains("not set, left as is: nope"))
        let json = try await rig.clientctl(["label", "list", "--root", root, "--json"])
        #expect(try JSONDecoder().decode([String: String].self, from: json.stdout) == ["ring": "beta", "store": "12"])
        #expect(try await rig.status(root).labels == ["ring": "beta", "store": "12"])
    }
}

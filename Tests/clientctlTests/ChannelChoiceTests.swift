import ClientFoundation
import ClientShim
import ClientUpdater
import Foundation
import SignedArchive
import TestSupport
import Testing

/// A device moving itself between the channels its trust root allows, as users run it
/// (docs/targeting.md#choosing-a-channel): a root made with the built `clientctl root init
/// --choosable beta` and signed with `root sign`, releases published into `stable` and
/// `beta` of one folder hosted on 127.0.0.1, a device pinned to the root with `init
/// --trust-root`, moved with `channel set` or the page's control route of `clientctl serve`.
struct ChannelRig {
    let dir: TemporaryDirectory
    let server: LoopbackHTTPServer
    let sample = ClientctlBinary.packagePath("Fixtures/sample-client")
    let key = ClientctlBinary.packagePath("Keys/test-signing.pem")
    let pub = ClientctlBinary.packagePath("Keys/test-signing.pub.pem")

    /// A release folder whose `stable` channel publishes root 1 (the test key in both
    /// roles); `choosable` are the channels it lets its devices choose.
    init(choosable: [String] = ["beta"]) async throws {
        dir = try TemporaryDirectory("channels")
        try FileManager.default.createDirectory(atPath: dir("rel/stable/root"), withIntermediateDirectories: true)
        server = try LoopbackHTTPServer(handler: LoopbackHTTPServer.folder(dir("rel")))
        let draft = dir("root-1.json")
        try await clientctl(
            [
                "root", "init", draft, "--app", "com.example.notes", "--channel", "stable", "--root-key", pub, "--release-key", pub,
                "--expires", "365d",
            ] + choosable.flatMap { ["--choosable", $0] })
        try await clientctl(["root", "sign", draft, "--key", key])
        try FileManager.default.copyItem(atPath: draft, toPath: dir("rel/stable/root/1.json"))
    }

    @discardableResult
    func clientctl(_ args: [String], expect status: Int32 = 0, sourceLocation: SourceLocation = #_sourceLocation) async throws
        -> Subprocess.Result
    {
        let r = try await ClientctlBinary.run(args)
        #expect(r.status == status, "clientctl \(args.joined(separator: " ")): \(r.errorOutput)", sourceLocation: sourceLocation)
        return r
    }

    func publish(_ version: String, channel: String, key: String? = nil) async throws {
        try await clientctl([
            "publish", sample, "--app", "com.example.notes", "--channel", channel, "--version", version, "--min-shell", "1.0.0",
            "--key", key ?? self.key, "--out", dir("rel"),
        ])
    }

    /// A device of the root's channel pinned to root 1 (or trusting the key alone: the implicit root).
    func device(_ name: String, pinned: Bool = true) async throws -> String {
        let root = dir(name)
        try await clientctl(
            [
                "init", "--root", root, "--app", "com.example.notes", "--channel", "stable",
                "--manifest-url", server.url("/stable/manifest.json").absoluteString, "--shell-version", "1.0.0",
            ] + (pinned ? ["--trust-root", dir("rel/stable/root/1.json")] : ["--trust", pub]))
        return root
    }

    func install(_ root: String, expect status: Int32 = 0) async throws -> InstallReport? {
        let r = try await clientctl(["install", "--root", root, "--json"], expect: status)
        return status == 0 ? try JSONDecoder().decode(InstallReport.self, from: r.stdout) : nil
    }

    func status(_ root: String) async throws -> StatusReport {
        let r = try await clientctl(["status", "--root", root, "--json"])
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(StatusReport.self, from: r.stdout)
    }

    func show(_ root: String) async throws -> ChannelMove.Choice {
        try JSONDecoder().decode(ChannelMove.Choice.self, from: try await clientctl(["channel", "show", "--root", root, "--json"]).stdout)
    }

    /// The version a fresh start would run: pending first, else the seed rule's choice.
    func runs(_ root: String) async throws -> String? {
        let s = try await status(root)
        if let pending = s.pending { return pending }
        if case .installed(let version) = s.selected { return version }
        return nil
    }

    func configBytes(_ root: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: root + "/config.json")) }
}

@Suite struct ChannelChoiceTests {
    /// A tester moves to beta and takes its release candidate, moves back and runs
    /// stable's release again (below the rc: each channel keeps its own floor), and moves
    /// to beta once more without a download.
    @Test func aDeviceMovesToBetaTakesItsReleaseAndComesBackToStable() async throws {
        let rig = try await ChannelRig()
        try await rig.publish("1.4.0", channel: "stable")
        try await rig.publish("1.5.0-rc.1", channel: "beta")
        let root = try await rig.device("tester")
        #expect(try await rig.install(root)?.version == "1.4.0")
        let shown = try await rig.show(root)
        #expect(shown.channel == "stable" && shown.choosable == ["beta", "stable"] && shown.chosen == nil && shown.trustRoot == 1)

        let set = try await rig.clientctl(["channel", "set", "--root", root, "beta"])
        #expect(set.errorOutput.contains("channel: beta (chosen on this device; the trust root's own channel is stable) (was: stable)"))
        let waiting = try await rig.status(root)
        #expect(waiting.channel == "beta" && waiting.rootChannel == "stable")
        #expect(waiting.channelChoice?.contains("follows channel 'beta' from its next check") == true)
        let beta = try #require(try await rig.install(root))
        #expect(beta.result == .installed && beta.version == "1.5.0-rc.1", "\(beta)")
        #expect(try await rig.runs(root) == "1.5.0-rc.1")
        let onBeta = try await rig.status(root)
        #expect(onBeta.channel == "beta" && onBeta.highestAccepted == "1.5.0-rc.1" && onBeta.channelChoice == nil)
        let text = try await rig.clientctl(["status", "--root", root]).stdout
        let line = "channel:         beta (chosen on this device; the trust root's own channel is stable); may follow beta, stable"
        #expect(String(decoding: text, as: UTF8.self).contains(line))

        try await rig.clientctl(["channel", "set", "--root", root, "stable"])
        #expect(try await rig.show(root).chosen == nil, "the root's own channel undoes the choice")
        let back = try #require(try await rig.install(root))
        #expect(back.version == "1.4.0", "stable's release again, below beta's: \(back)")
        #expect(try await rig.runs(root) == "1.4.0")
        #expect(try await rig.status(root).highestAccepted == "1.4.0", "stable's own floor")

        try await rig.clientctl(["channel", "set", "--root", root, "beta"])
        let again = try #require(try await rig.install(root))
        #expect(again.version == "1.5.0-rc.1", "beta's release, still installed, staged again: \(again)")
        #expect(try await rig.runs(root) == "1.5.0-rc.1")
    }

    /// A release revoked on stable and met again on beta is refused as revoked (the
    /// `check-refused` report's reason `revoked`), not as a release that "failed start-up
    /// twice" on this device: the device remembers which of its blacklisted versions a
    /// signed revocation put there, whatever channel it follows.
    @Test func aReleaseRevokedOnOneChannelIsRefusedAsRevokedOnAnother() async throws {
        let rig = try await ChannelRig()
        try await rig.publish("1.4.0", channel: "stable")
        try await rig.publish("1.5.0", channel: "stable")
        try await rig.publish("1.5.0", channel: "beta")
        try await rig.clientctl([
            "publish", rig.sample, "--app", "com.example.notes", "--channel", "stable", "--version", "1.5.1", "--min-shell", "1.0.0",
            "--key", rig.key, "--out", rig.dir("rel"), "--revoke", "1.5.0",
        ])
        let root = try await rig.device("tester")
        #expect(try await rig.install(root)?.version == "1.5.1")
        try await rig.clientctl(["channel", "set", "--root", root, "beta"])
        let beta = try #require(try await rig.install(root))
        #expect(beta.message.contains("release 1.5.0 is blacklisted on this device (it is revoked)"), "\(beta)")
        #expect(!beta.message.contains("failed start-up"), "\(beta)")
    }

    /// A channel the root does not list (77), a name off the rule (64), a move on a device
    /// of `--trust` keys only (77): one line each, and `config.json` stays byte for byte.
    @Test func aChannelTheRootDoesNotListIsRefusedAndNothingIsWritten() async throws {
        let rig = try await ChannelRig()
        let root = try await rig.device("pinned")
        let before = try rig.configBytes(root)
        let nightly = try await rig.clientctl(["channel", "set", "--root", root, "nightly"], expect: 77)
        #expect(
            nightly.errorOutput.trimmingCharacters(in: .newlines)
                == "clientctl: channel 'nightly' is not allowed by trust root 1: this device may follow 'beta', 'stable'")
        let bad = try await rig.clientctl(["channel", "set", "--root", root, "../beta"], expect: 64)
        #expect(bad.errorOutput.contains("channel '../beta': expected 1–64 ASCII letters"))
        try await rig.clientctl(["channel", "set", "--root", root, "beta", "--manifest-url", "http://example.com/beta/manifest.json"], expect: 64)
        #expect(try rig.configBytes(root) == before)

        let keysOnly = try await rig.device("keys", pinned: false)
        let keysBefore = try rig.configBytes(keysOnly)
        let refused = try await rig.clientctl(["channel", "set", "--root", keysOnly, "beta"], expect: 77)
        #expect(refused.errorOutput.contains("this device trusts its --trust keys, not a signed root, and follows only 'stable'"))
        #expect(try rig.configBytes(keysOnly) == keysBefore)
        #expect(try await rig.show(keysOnly).choosable == ["stable"])
    }

    /// Moving changes nothing about verification: a beta manifest signed by a key the root
    /// does not trust is refused (65) and the device keeps what it runs.
    @Test func aManifestOfTheChosenChannelSignedByAnUntrustedKeyIsRefused() async throws {
        let rig = try await ChannelRig()
        try await rig.publish("1.4.0", channel: "stable")
        try await rig.clientctl(["keygen", "--out", rig.dir("rogue")])
        try await rig.publish("1.5.0-rc.1", channel: "beta", key: rig.dir("rogue.pem"))
        let root = try await rig.device("tester")
        _ = try await rig.install(root)
        try await rig.clientctl(["channel", "set", "--root", root, "beta"])
        let refused = try await rig.clientctl(["install", "--root", root], expect: 65)
        #expect(
            refused.errorOutput.contains("beta/manifest.json") && refused.errorOutput.contains("which is not trusted"), "\(refused.errorOutput)")
        let s = try await rig.status(root)
        #expect(s.installed.map(\.version) == ["1.4.0"] && s.channel == "beta", "\(s)")
        #expect(try await rig.runs(root) == "1.4.0")
    }

    /// A root that no longer lists beta: the device that chose it takes nothing of beta,
    /// says why, and follows stable again — its choice stays written, for a later root.
    @Test func aRootThatDropsTheChannelBringsTheDeviceBackToItsOwn() async throws {
        let rig = try await ChannelRig()
        try await rig.publish("1.4.0", channel: "stable")
        try await rig.publish("1.5.0-rc.1", channel: "beta")
        let root = try await rig.device("tester")
        _ = try await rig.install(root)
        try await rig.clientctl(["channel", "set", "--root", root, "beta"])
        // Root 2 drops beta; a new stable manifest makes the device walk to it.
        let draft = rig.dir("root-2.json")
        try await rig.clientctl(["root", "init", draft, "--from", rig.dir("rel/stable/root/1.json"), "--expires", "365d"])
        try await rig.clientctl(["root", "set-choosable", draft])
        try await rig.clientctl(["root", "sign", draft, "--key", rig.key])
        try FileManager.default.copyItem(atPath: draft, toPath: rig.dir("rel/stable/root/2.json"))
        try await rig.publish("1.4.1", channel: "stable")
        try await rig.publish("1.5.0-rc.2", channel: "beta")
        // This check reads beta's manifest, walks to root 2, which refuses beta: nothing taken.
        let refused = try await rig.clientctl(["install", "--root", root], expect: 77)
        #expect(refused.errorOutput.contains("trust root 2 does not let this device follow channel 'beta'"), "\(refused.errorOutput)")
        let s = try await rig.status(root)
        #expect(s.channel == "stable" && s.trustRoot == 2 && s.channelChoice?.contains("does not let this device choose it") == true)
        #expect(try await rig.install(root)?.version == "1.4.1")
        #expect(try await rig.show(root).chosen == "beta")
    }

    /// The page's route under `clientctl serve`: it reads the choice, refuses a channel the
    /// root does not list (403) and a bad name (400), naming why; a move it makes is
    /// followed at the agent's next check, and kept across a restart of `serve`.
    @Test func thePageRouteMovesTheDeviceAndTheChoiceSurvivesARestart() async throws {
        let rig = try await ChannelRig()
        try await rig.publish("1.4.0", channel: "stable")
        try await rig.publish("1.5.0-rc.1", channel: "beta")
        let root = try await rig.device("kiosk")
        _ = try await rig.install(root)
        var serve = try await ServeProcess(root: root, scratch: rig.dir.path)
        func post(_ name: String, _ body: String, shim: Bool = true) async throws -> CurlResponse {
            try await Curl.request(
                serve.baseURL + "__clientctl/" + name, method: "POST",
                headers: (shim ? ["X-Clientctl-Shim: 1"] : []) + ["Content-Type: application/json"], body: Data(body.utf8))
        }
        let read = try await serve.get("/__clientctl/channel")
        #expect(read.status == 200)
        let choice = try JSONDecoder().decode(ControlChannels.self, from: read.data)
        #expect(choice == ControlChannels(channel: "stable", choosable: ["beta", "stable"], rootChannel: "stable"))

        let before = try rig.configBytes(root)
        let nightly = try await post("set-channel", #"{"channel":"nightly"}"#)
        #expect(nightly.status == 403 && nightly.body.contains("channel 'nightly' is not allowed by trust root 1"), "\(nightly.body)")
        let bad = try await post("set-channel", #"{"channel":"no such"}"#)
        #expect(bad.status == 400 && bad.body.contains("channel 'no such'"), "\(bad.body)")
        #expect(try await post("set-channel", #"{"channel":"beta"}"#, shim: false).status == 403, "the shim header, as every POST")
        #expect(try await post("set-channel", "{}").status == 400)
        #expect(try rig.configBytes(root) == before, "nothing written by a refusal")

        let moved = try await post("set-channel", #"{"channel":"beta"}"#)
        #expect(moved.status == 200 && (try? JSONDecoder().decode(ControlChannels.self, from: moved.data))?.channel == "beta", "\(moved.body)")
        #expect(serve.stop(SIGTERM) == 0, "\(serve.stderr)")

        // Restarted: the choice is in config.json; the page's check follows beta.
        serve = try await ServeProcess(root: root, scratch: rig.dir.path)
        #expect(try await serve.control("check").status == 200)
        let s = try await rig.status(root)
        #expect(s.channel == "beta", "\(s.lastCheck?.message ?? "")")
        #expect(try await rig.runs(root) == "1.5.0-rc.1" || s.current == .installed("1.5.0-rc.1"), "\(s.lastCheck?.message ?? "")")
        #expect(serve.stop(SIGTERM) == 0, "\(serve.stderr)")
    }
}

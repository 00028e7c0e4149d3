import ClientFoundation
import ClientUpdater
import Foundation
import ReleaseSigning
import SignedArchive
import SignedManifest
import StrictJSON
import TestSupport
import Testing

/// The rules a device moves between channels by (docs/targeting.md#choosing-a-channel),
/// from values: which channel it follows under its root, where that channel's manifest
/// is, what it may choose, what it remembers per channel and what the seed rule selects.
@Suite struct ChannelChoiceRuleTests {
    let key: Ed25519.PrivateKey
    let root: TrustRoot

    init() throws {
        key = try Ed25519.PrivateKey.generate()
        var draft = RootDraft(
            app: "com.example.notes", channel: "stable", expires: Date().addingTimeInterval(86_400), rootKeys: [key.publicKey],
            rootThreshold: 1, releaseKeys: [key.publicKey], releaseThreshold: 1)
        try draft.setChoosable(["beta"])
        try draft.sign(with: key)
        root = try draft.root()
    }

    static func settings(chosen: String? = nil, urls: [String: String]? = nil) -> ArchiveSettings {
        ArchiveSettings(
            channel: "stable", manifestURL: "https://cdn.example.com/notes/stable/manifest.json", trustedKeys: [], pinnedRoot: true,
            chosenChannel: chosen, channelURLs: urls)
    }

    @Test func aDeviceFollowsTheChosenChannelTheRootAllowsElseItsOwn() throws {
        #expect(
            try ChannelChoice.following(Self.settings(), root: root)
                == .init(channel: "stable", manifestURL: "https://cdn.example.com/notes/stable/manifest.json"))
        #expect(
            try ChannelChoice.following(Self.settings(chosen: "beta"), root: root)
                == .init(channel: "beta", manifestURL: "https://cdn.example.com/notes/beta/manifest.json"), "the sibling folder")
        let mapped = Self.settings(chosen: "beta", urls: ["beta": "https://beta.example.com/m.json"])
        #expect(try ChannelChoice.following(mapped, root: root).manifestURL == "https://beta.example.com/m.json")

        let dropped = try ChannelChoice.following(Self.settings(chosen: "nightly"), root: root)
        #expect(dropped.channel == "stable" && dropped.manifestURL == "https://cdn.example.com/notes/stable/manifest.json")
        #expect(dropped.note == "channel 'nightly' was chosen, but trust root 1 does not let this device choose it: it follows 'stable'")
        let implicit = TrustRoot.implicit(trusting: [key.publicKey], app: "com.example.notes", channel: "stable")
        #expect(try ChannelChoice.following(Self.settings(chosen: "beta"), root: implicit).channel == "stable")

        var file = Self.settings(chosen: "beta")
        file.manifestURL = "file:///srv/releases/stable/manifest.json"
        #expect(try ChannelChoice.manifestURL(for: "beta", settings: file) == "file:///srv/releases/beta/manifest.json")
    }

    @Test func aChannelIsRefusedByItsNameOrByTheRootNamingWhy() throws {
        #expect(ChannelChoice.refusal("beta", root: root) == nil)
        #expect(ChannelChoice.refusal("stable", root: root) == nil)
        let unlisted = try #require(ChannelChoice.refusal("nightly", root: root))
        #expect(unlisted.code == .channelNotAllowed && unlisted.kind == .notPermitted && unlisted.kind.exitStatus == 77)
        #expect(unlisted.message == "channel 'nightly' is not allowed by trust root 1: this device may follow 'beta', 'stable'")
        let bad = try #require(ChannelChoice.refusal("be ta", root: root))
        #expect(bad.kind == .usage && bad.message.hasPrefix("channel 'be ta': expected 1–64 ASCII letters"))
        let implicit = TrustRoot.implicit(trusting: [key.publicKey], app: "com.example.notes", channel: "stable")
        #expect(ChannelChoice.refusal("beta", root: implicit)?.code == .channelNotAllowed, "the --trust keys allow no other channel")
        #expect(ChannelChoice.manifestURLProblem("http://example.com/beta/manifest.json", allowInsecureHTTP: false) != nil)
        #expect(ChannelChoice.manifestURLProblem("beta/manifest.json", allowInsecureHTTP: false) == "'beta/manifest.json' is not an absolute URL")
    }

    /// stable → beta → stable: each channel keeps its own floor and newest `published`;
    /// the ETags, which were the channel left's, go.
    @Test func eachChannelKeepsItsOwnFloorAndReplayMemory() {
        var memory = ArchiveMemory(
            highestAccepted: "1.4.0", manifestETag: "\"s\"", newestPublished: "2026-11-01T00:00:00Z", restrictionETag: "\"r\"")
        #expect(!ChannelChoice.follow("stable", home: "stable", memory: &memory), "no move: nothing changes")
        #expect(memory.channel == nil && memory.manifestETag == "\"s\"")

        #expect(ChannelChoice.follow("beta", home: "stable", memory: &memory))
        #expect(memory.channel == "beta" && memory.highestAccepted == nil && memory.newestPublished == nil)
        #expect(memory.manifestETag == nil && memory.restrictionETag == nil)
        #expect(memory.parked == ["stable": .init(highestAccepted: "1.4.0", newestPublished: "2026-11-01T00:00:00Z")])
        memory.highestAccepted = "1.5.0-rc.1"
        memory.newestPublished = "2026-11-20T00:00:00Z"
        memory.manifestETag = "\"b\""

        #expect(ChannelChoice.follow("stable", home: "stable", memory: &memory))
        #expect(memory.channel == "stable" && memory.highestAccepted == "1.4.0" && memory.newestPublished == "2026-11-01T00:00:00Z")
        #expect(memory.manifestETag == nil)
        #expect(memory.parked == ["beta": .init(highestAccepted: "1.5.0-rc.1", newestPublished: "2026-11-20T00:00:00Z")])
    }

    /// Back on stable, a stable manifest published before beta's newest is no replay; one
    /// published before stable's own newest still is.
    @Test func theReplayRuleHoldsPerChannel() throws {
        var memory = ArchiveMemory(highestAccepted: "1.4.0", newestPublished: RFC3339.format(ManifestSamples.published))
        ChannelChoice.follow("beta", home: "stable", memory: &memory)
        memory.newestPublished = RFC3339.format(ManifestSamples.published.addingTimeInterval(7 * 86_400))
        ChannelChoice.follow("stable", home: "stable", memory: &memory)
        var same = ManifestSamples.draft(version: "1.4.0")
        same.published = ManifestSamples.published.addingTimeInterval(3600)
        #expect(FeedRules.replayProblem(try same.signed(with: key), memory: memory) == nil)
        var older = ManifestSamples.draft(version: "1.3.9")
        older.published = ManifestSamples.published.addingTimeInterval(-3600)
        #expect(FeedRules.replayProblem(try older.signed(with: key), memory: memory)?.contains("a stale cache or a replay") == true)
    }

    /// The seed rule of a device that moved takes nothing above the followed channel's
    /// floor; one that never moved selects as before.
    @Test func aDeviceThatMovedSelectsOnlyUpToTheFollowedChannelsFloor() {
        let installed = ["1.3.0", "1.4.0", "1.5.0-rc.1"].map { InstalledVersion(id: $0, directory: "/clients/v\($0)") }
        let never = ArchiveMemory(highestAccepted: "1.5.0-rc.1")
        #expect(ChannelChoice.selectable(installed, memory: never) == installed)
        var back = ArchiveMemory(highestAccepted: "1.4.0")
        back.channel = "stable"
        #expect(ChannelChoice.selectable(installed, memory: back).map(\.id) == ["1.3.0", "1.4.0"])
        var fresh = ArchiveMemory()
        fresh.channel = "nightly"
        #expect(ChannelChoice.selectable(installed, memory: fresh).isEmpty, "nothing of the channel accepted yet")
    }
}

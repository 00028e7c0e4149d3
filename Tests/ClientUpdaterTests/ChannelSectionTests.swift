import ClientFoundation
import ClientUpdater
import DeviceSetup
import Foundation
import TestSupport
import Testing

/// The core keeps a channel's keys of config.json and state.json without reading them:
/// files written before the split (channel keys beside the core's) load and save with
/// every key and value unchanged, and a channel reads its section as its own type.
@Suite struct ChannelSectionTests {
    struct ArchiveLike: ChannelSettings {
        var channel: String
        var manifestURL: String
        var trustedKeys: [String]
        func problem(in config: DeviceConfig) -> String? { trustedKeys.isEmpty ? "trustedKeys is empty" : nil }
    }

    static let archiveConfig = """
        {"allowInsecureHTTP":false,"app":"com.example.notes","channel":"stable","channelKind":"signed-archive",
         "format":"clientctl-config-v1","keep":3,"limits":{"maxArchiveBytes":1073741824,"maxEntries":100000,
         "maxUnpackedBytes":1073741824},"manifestURL":"https://cdn.example.com/stable/manifest.json",
         "shellVersion":"1.4.0","startupTimeoutSeconds":10,"trustedKeys":["-----BEGIN PUBLIC KEY-----\\nMCow\\n-----END PUBLIC KEY-----\\n"]}
        """
    static let meteorState = """
        {"blacklist":["v0"],"current":"v2","format":"clientctl-state-v1","lastSeenEmbeddedVersion":"v1",
         "meteor":{"appId":"abc","cordovaCompatibilityVersion":"1.2","lastDownloadedVersion":"v2","rootURL":"https://app.example.com/"},
         "retry":[]}
        """

    static func object(_ data: Data) throws -> NSDictionary {
        try #require(try JSONSerialization.jsonObject(with: data) as? NSDictionary)
    }

    @Test func aConfigWrittenBeforeTheSplitRoundTripsWithEveryKey() throws {
        let input = Data(Self.archiveConfig.utf8)
        let config = try JSONDecoder().decode(DeviceConfig.self, from: input)
        #expect(config.app == "com.example.notes" && config.channelKind.rawValue == "signed-archive")
        #expect(Set(config.channelSettings.values.keys) == ["channel", "manifestURL", "trustedKeys"], "only the channel's keys")
        #expect(try Self.object(try config.encoded()) == Self.object(input))
        let tmp = try TemporaryDirectory("section")
        let settings = try config.settings(ArchiveLike.self, layout: RootLayout(root: tmp.path))
        #expect(settings.channel == "stable" && settings.trustedKeys.count == 1)
    }

    @Test func aStateWrittenBeforeTheSplitRoundTripsWithEveryKey() throws {
        let input = Data(Self.meteorState.utf8)
        let state = try JSONDecoder().decode(DeviceState.self, from: input)
        #expect(state.current == "v2" && state.blacklist == ["v0"])
        #expect(Array(state.channelMemory.values.keys) == ["meteor"])
        #expect(try Self.object(try JSONEncoder().encode(state)) == Self.object(input))
    }

    @Test func theChannelRulesAreCheckedAtLoadAndWhenBuilt() throws {
        let tmp = try TemporaryDirectory("section")
        let layout = RootLayout(root: tmp.path)
        var config = try JSONDecoder().decode(DeviceConfig.self, from: Data(Self.archiveConfig.utf8))
        config.channelSettings = try ChannelSection(ArchiveLike(channel: "stable", manifestURL: "x", trustedKeys: []))
        #expect {
            try config.settings(ArchiveLike.self, layout: layout)
        } throws: { ($0 as? UpdaterError)?.message == "\(layout.config): trustedKeys is empty" }
        #expect {
            try DeviceConfig(
                app: "a", channelKind: .init(rawValue: "x"), settings: ArchiveLike(channel: "s", manifestURL: "u", trustedKeys: []),
                shellVersion: Version(1, 0, 0))
        } throws: { ($0 as? UpdaterError)?.code == .invalidArgument }
    }

    @Test func aChannelKeyThatIsTheCoresIsRefusedNotWrittenTwice() throws {
        struct Clash: Codable { var app = "mine" }
        var config = try JSONDecoder().decode(DeviceConfig.self, from: Data(Self.archiveConfig.utf8))
        config.channelSettings = try ChannelSection(Clash())
        #expect(throws: EncodingError.self) { try config.encoded() }
    }
}

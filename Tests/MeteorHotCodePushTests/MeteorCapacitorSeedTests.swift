import ClientFoundation
import ClientUpdater
import DeviceSetup
import Foundation
import MeteorHotCodePush
import TestSupport
import Testing

/// A seed built by Meteor's own Capacitor integration (`@meteorjs/capacitor`: URLs without
/// `/__cordova/`, versions hashed over `{}`), updated from a server shaped like Meteor 3
/// (webapp_server.js routes and ETags): the seed donates every file it holds
/// (docs/meteor.md#the-seed-as-a-donor). Fixtures: `Fixtures/meteor/capacitor/`.
@Suite struct MeteorCapacitorSeedTests {
    static var fixtures: MeteorCapacitorFixtures { MeteorCapacitorFixtures(root: GeneratedMeteorFixtures.root + "/capacitor") }

    /// A root initialised on `seed`, served like webapp_server.js.
    static func harness(seed: String? = nil) throws -> MeteorHarness {
        try MeteorHarness(embedded: seed ?? fixtures.seed, versions: fixtures.versions, style: .webapp)
    }

    /// What `status` says of the channel (`channelNote`).
    static func note(_ h: MeteorHarness) async throws -> String? {
        try await h.updater().status().channelNote
    }

    /// The request paths of a check that fetched the manifest, index.html and `files`.
    static func requests(fetching files: [MeteorServedFile]) -> [String] {
        (["/__cordova/manifest.json", "/__cordova/"] + files.map { "/__cordova" + $0.urlPath }).sorted()
    }

    // The rule itself, on the bundles alone: under either spelling, same hash = the seed's.
    @Test func aServerEntryTheSeedHoldsUnderTheOtherSpellingIsNotOwn() throws {
        let seed = try AssetBundle.load(directory: Self.fixtures.seed, platform: .ios, parent: nil)
        #expect(seed.manifest.assets.allSatisfy { !$0.urlPath.hasPrefix("/__cordova/") }, "the Capacitor build stripped the prefix")
        let nextChanged = try Self.fixtures.changedFiles("next_version").count
        for (name, expectedOwn) in [("same_build", 0), ("next_version", nextChanged)] {
            let served = try Self.fixtures.rendered(name)
            let manifest = try AssetManifest.parse(served.manifest, platform: .ios)
            // The server lists the bundle and the stylesheet under /__cordova/ only (public
            // files under both spellings).
            #expect(manifest.assets.filter { ["js", "css"].contains($0.type) }.allSatisfy { $0.urlPath.hasPrefix("/__cordova/") })
            let bundle = AssetBundle(directory: "/nonexistent", manifest: manifest, parent: seed)
            let own = Set(bundle.ownAssets.filter { !$0.isIndexPage }.map(\.filePath))
            #expect(own.count == expectedOwn, "\(name): own \(own.sorted())")
            // Every inherited URL resolves to the seed's file of that content.
            for asset in manifest.assets where !own.contains(asset.filePath) && !asset.isIndexPage {
                let resolved = try #require(bundle.resolve(urlPath: asset.urlPath))
                #expect(resolved.file == Self.fixtures.seed + "/" + asset.filePath)
            }
        }
        // Another hash under the same spelling-free path stays own.
        var changed = try AssetManifest.parse(try Self.fixtures.rendered("same_build").manifest, platform: .ios)
        let index = try #require(changed.assets.firstIndex { $0.type == "css" })
        changed.assets[index].hash = String(repeating: "0", count: 40)
        #expect(AssetBundle(directory: "/nonexistent", manifest: changed, parent: seed).ownAssets.map(\.type).contains("css"))
    }

    // The same build on the server: the manifest and index.html, no asset file; the new
    // version serves the seed's files at the server's URLs; status says why it was taken.
    @Test func theSameBuildCostsOnlyTheManifestAndIndexHTML() async throws {
        let h = try Self.harness()
        let seedVersion = try #require(try h.channel.embeddedVersion()).id
        let served = try Self.fixtures.rendered("same_build")
        #expect(served.version != seedVersion, "the build hashed {}, the server {\"PUBLIC_SETTINGS\":{}}")
        let outcome = try await h.check(serving: "same_build")
        guard case .installed(let v) = outcome else {
            Issue.record("expected installed, got \(outcome)")
            return
        }
        #expect(v.id == served.version)
        #expect(h.server.requestedPaths.sorted() == Self.requests(fetching: []))
        let stored = try FileManager.default.subpathsOfDirectory(atPath: h.layout.meteor + "/" + v.id)
        #expect(Set(stored) == ["program.json", "index.html"], "nothing but the manifest and the page is stored")
        let note = try #require(try await Self.note(h))
        #expect(note.contains("embedded seed's build (\(seedVersion))") && note.contains("AUTOUPDATE_VERSION"))
        let explained = try await h.updater().explainedStatus()
        #expect(explained.explanation?.contains("note: " + note) == true)

        try await h.reload()
        for file in served.files {
            let path = try #require(try h.servedFile(file.urlPath), "\(file.urlPath) is served")
            #expect(path.hasPrefix(Self.fixtures.seed + "/"), "\(file.urlPath) comes from the seed")
            #expect(FileManager.default.contents(atPath: path) == file.bytes)
        }
        #expect(try await Self.note(h) == note, "still said while the renamed build runs")
    }

    // A next version: exactly its changed files, each once, from the seed or after the
    // renamed build; the note goes.
    @Test func aNextVersionCostsOnlyItsChangedFiles() async throws {
        let changed = try Self.fixtures.changedFiles("next_version")
        #expect(changed.count == 4, "the bundle, its map and stats, some-file: \(changed.map(\.urlPath))")
        let h = try Self.harness()
        let outcome = try await h.check(serving: "next_version")
        guard case .installed = outcome else {
            Issue.record("expected installed, got \(outcome)")
            return
        }
        #expect(h.server.requestedPaths.sorted() == Self.requests(fetching: changed))
        #expect(try await Self.note(h) == nil, "a real update needs no note")

        let after = try Self.harness()
        try await after.install("same_build")
        _ = try await after.check(serving: "next_version")
        #expect(after.server.requestedPaths.sorted() == Self.requests(fetching: changed))
        #expect(try await Self.note(after) == nil)
        try await after.reload()
        let next = try Self.fixtures.rendered("next_version")
        for file in next.files { #expect(try after.servedFile(file.urlPath).flatMap { FileManager.default.contents(atPath: $0) } == file.bytes) }
    }

    // Only Meteor.settings.public changed: a new version for good reason (the page carries
    // the settings), the manifest and index.html only, and no note.
    @Test func aSettingsOnlyBumpCostsTheManifestAndIndexHTMLWithoutANote() async throws {
        let h = try Self.harness()
        let outcome = try await h.check(serving: "settings_bump")
        guard case .installed = outcome else {
            Issue.record("expected installed, got \(outcome)")
            return
        }
        #expect(h.server.requestedPaths.sorted() == Self.requests(fetching: []))
        #expect(try await Self.note(h) == nil, "the settings differ: not the seed's build")
    }

    // AUTOUPDATE_VERSION set alike for the build and the server: one version, nothing fetched.
    @Test func theSameAutoupdateVersionForBuildAndServerIsUpToDate() async throws {
        let h = try Self.harness(seed: Self.fixtures.seedWithAutoupdateVersion)
        #expect(try h.channel.embeddedVersion()?.id == MeteorCapacitorFixtures.autoupdateVersion)
        let outcome = try await h.check(serving: MeteorCapacitorFixtures.autoupdateVersion)
        guard case .upToDate = outcome else {
            Issue.record("expected up to date, got \(outcome)")
            return
        }
        #expect(h.server.requestedPaths == ["/__cordova/manifest.json"])
    }

    // hcp "none" leaves program.json out: init says so in Meteor's words, and writes nothing.
    @Test func initRefusesAnHCPNoneSeedNamingTheSetting() throws {
        #expect(!FileManager.default.fileExists(atPath: Self.fixtures.seedWithoutHCP + "/program.json"))
        #expect {
            try MeteorRootSetup.make(
                .init(
                    meteorURL: "http://127.0.0.1:3000/", embedded: Self.fixtures.seedWithoutHCP, compatPlatform: "ios", shellVersion: "1.0.0",
                    deviceSettings: DeviceSettings(startupTimeoutSeconds: 600, keep: 1), allowInsecureHTTP: false))
        } throws: {
            let e = $0 as? MeteorError
            return e?.code == .embeddedInvalid && e?.message.contains(#"meteor.capacitor.hcp is "none""#) == true
                && e?.message.contains(#"set it to "webapp""#) == true && e?.message.contains("\n") == false
        }
    }
}

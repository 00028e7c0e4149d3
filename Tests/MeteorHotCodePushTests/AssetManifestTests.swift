import ClientUpdater
import Foundation
import MeteorHotCodePush
import TestSupport
import Testing

@Suite struct AssetManifestTests {
    static let compat = #"{"android":"aaaa","ios":"iiii"}"#

    static func manifest(_ entries: String, version: String = "v1", extra: String = "") -> Data {
        Data(
            #"{"format":"web-program-pre1","version":"\#(version)","cordovaCompatibilityVersions":\#(compat),\#(extra)"manifest":[\#(entries)]}"#.utf8
        )
    }

    static let hashA = String(repeating: "a", count: 40)
    static func entry(url: String, path: String = "app/x.js", hash: String = hashA, extra: String = "") -> String {
        #"{"path":"\#(path)","where":"client","type":"js","cacheable":true,"url":"\#(url)","size":3,"hash":"\#(hash)"\#(extra)}"#
    }

    @Test func parsesClientEntriesSourceMapsAndSynthesisesIndex() throws {
        let m = try AssetManifest.parse(
            Self.manifest(
                Self.entry(url: "/app/x.js?\(Self.hashA)", extra: #","sourceMap":"app/x.js.map","sourceMapUrl":"/app/\#(Self.hashA).map""#)
                    + #",{"path":"head.html","where":"internal","type":"head","hash":"\#(Self.hashA)"}"#),
            platform: .ios)
        #expect(m.version == "v1")
        #expect(m.cordovaCompatibilityVersion == "iiii")
        #expect(m.assets.map(\.urlPath) == ["/app/x.js", "/app/\(Self.hashA).map", "/"])
        let js = try #require(m.asset(forURLPath: "/app/x.js"))
        #expect(js.hash == Self.hashA && js.cacheable && js.sourceMapURLPath == "/app/\(Self.hashA).map" && js.size == 3)
        let map = try #require(m.asset(forURLPath: "/app/\(Self.hashA).map"))
        #expect(map.filePath == "app/x.js.map" && map.type == "json" && map.cacheable && map.hash == nil && map.isSourceMap)
        let index = try #require(m.asset(forURLPath: "/"))
        #expect(index.filePath == "index.html" && !index.cacheable && index.hash == nil && index.isIndexPage && !index.isSourceMap)
    }

    @Test func picksTheConfiguredPlatform() throws {
        let m = try AssetManifest.parse(Self.manifest(""), platform: .android)
        #expect(m.cordovaCompatibilityVersion == "aaaa")
    }

    @Test func skipsEntriesMissingRequiredFieldsLikeIOS() throws {
        let noHash = #"{"path":"a","where":"client","type":"js","cacheable":true,"url":"/a"}"#
        let noURL = #"{"path":"b","where":"client","type":"js","cacheable":true,"hash":"\#(Self.hashA)"}"#
        let m = try AssetManifest.parse(Self.manifest(noHash + "," + noURL), platform: .ios)
        #expect(m.assets.map(\.urlPath) == ["/"])
        let noManifest = try AssetManifest.parse(Data(#"{"version":"v","cordovaCompatibilityVersions":\#(Self.compat)}"#.utf8), platform: .ios)
        #expect(noManifest.assets.map(\.urlPath) == ["/"])
    }

    @Test(arguments: [
        (#"{"format":"web-program-pre2","version":"v","cordovaCompatibilityVersions":{"ios":"i"}}"#, "The asset manifest format is incompatible"),
        (#"{"format":"web-program-pre1","cordovaCompatibilityVersions":{"ios":"i"}}"#, "Asset manifest does not have a version"),
        (#"{"format":"web-program-pre1","version":"v"}"#, "Asset manifest does not have a cordovaCompatibilityVersion"),
        (#"{"version":"v","cordovaCompatibilityVersions":{"android":"a"}}"#, "Asset manifest does not have a cordovaCompatibilityVersion"),
        (#"[1,2]"#, "Error parsing asset manifest"),
        (#"<html>"#, "Error parsing asset manifest"),
        (#"{"version":"../x","cordovaCompatibilityVersions":{"ios":"i"}}"#, "cannot be used as a folder name"),
        (#"{"version":"Downloading","cordovaCompatibilityVersions":{"ios":"i"}}"#, "cannot be used as a folder name"),
    ])
    func rejectsBadManifests(_ json: String, _ fragment: String) {
        #expect {
            try AssetManifest.parse(Data(json.utf8), platform: .ios)
        } throws: { ($0 as? MeteorError)?.message.contains(fragment) == true }
    }

    @Test(arguments: [
        ("/../../x", "app/x.js"), ("/a/../../x", "app/x.js"), ("/%2e%2e/x", "app/x.js"), ("/a//b", "app/x.js"),
        ("relative", "app/x.js"), ("/a\\b", "app/x.js"), ("/ok.js", "../x.js"), ("/ok.js", "/etc/passwd"),
        ("/ok.js", "a/./b"), ("/ok.js", "program.json"), ("/ok.js", "index.html"), ("/ok.js", ""),
    ])
    func rejectsPathsOutsideTheBundle(_ url: String, _ path: String) {
        #expect {
            try AssetManifest.parse(Self.manifest(Self.entry(url: url, path: path)), platform: .ios)
        } throws: { error in
            guard let e = error as? MeteorError else { return false }
            return e.code == .unsafePath && e.kind == .dataError
        }
    }

    @Test func rejectsConflictsBetweenEntries() {
        let twoURLs = Self.entry(url: "/a", path: "a1") + "," + Self.entry(url: "/a", path: "a2", hash: String(repeating: "b", count: 40))
        let fileAndFolder = Self.entry(url: "/a", path: "x") + "," + Self.entry(url: "/b", path: "x/y")
        let twoContents = Self.entry(url: "/a", path: "x") + "," + Self.entry(url: "/b", path: "x", hash: String(repeating: "b", count: 40))
        for entries in [twoURLs, fileAndFolder, twoContents] {
            #expect(throws: MeteorError.self) { try AssetManifest.parse(Self.manifest(entries), platform: .ios) }
        }
        // One file under two URLs (public/ files served at /x and /__cordova/x) is fine.
        let alias = Self.entry(url: "/a", path: "x") + "," + Self.entry(url: "/__cordova/a", path: "x")
        #expect((try? AssetManifest.parse(Self.manifest(alias), platform: .ios))?.assets.count == 3)
    }

    @Test func rejectsInvalidHashes() {
        #expect(throws: MeteorError.self) {
            try AssetManifest.parse(Self.manifest(Self.entry(url: "/a", hash: "ABC")), platform: .ios)
        }
    }

    @Test func capsSizeAndEntryCount() {
        let data = Self.manifest(Self.entry(url: "/a"))
        #expect { try AssetManifest.parse(data, platform: .ios, limits: .init(maxBytes: data.count - 1)) } throws: {
            ($0 as? MeteorError)?.code == .tooLarge
        }
        let two = Self.manifest(Self.entry(url: "/a", path: "a") + "," + Self.entry(url: "/b", path: "b"))
        #expect { try AssetManifest.parse(two, platform: .ios, limits: .init(maxAssets: 1)) } throws: {
            ($0 as? MeteorError)?.code == .tooLarge
        }
    }

    @Test(arguments: MeteorFixtureSource.all)
    func parsesTheBundledManifest(source: MeteorFixtureSource) throws {
        let fixtures = try source.materialize()
        let data = try Data(contentsOf: URL(fileURLWithPath: fixtures.embedded + "/program.json"))
        let m = try AssetManifest.parse(data, platform: .ios)
        #expect(m.version == "version1")
        #expect(m.cordovaCompatibilityVersion == "0abe549f2adbcf6cd295428aefea628ebe69666a")
        // Reference: 14 client entries, 4 source maps, index.html. Generated: every served
        // file (entries and maps, each URL once), index.html. head.html (internal) is dropped.
        let served = try fixtures.scenario.map { Set(try $0.rendered("version1").files.map(\.urlPath)).count + 1 } ?? 19
        #expect(m.assets.count == served)
        #expect(m.asset(forURLPath: "/some-file")?.filePath == "app/some-file")
        #expect(m.asset(forURLPath: "/head.html") == nil)
    }
}

import ClientFoundation
import ClientUpdater
import Foundation
import MeteorHotCodePush
import TestSupport
import Testing

/// What a device meets on a current Meteor server (meteor/meteor release-3.1.0), each
/// point named after the source file that makes it so.
@Suite struct MeteorCurrentServerTests {
    /// A harness on a fresh folder of server states, served like webapp_server.js.
    static func harness(_ states: [String: (MeteorRenderedVersion, Data?)], etags: Bool = true) throws -> MeteorHarness {
        let folder = try TemporaryDirectory("meteor-current")
        let fixtures = MeteorScenarioFixtures(shape: .current, root: folder.path)
        try MeteorScenarioFixtures.writeOnDevice(MeteorShapedApp.render(MeteorScenarioFixtures.content(1), shape: .current), to: fixtures.embedded)
        for (name, (version, index)) in states {
            try MeteorScenarioFixtures.writeServer(version, to: fixtures.versions + "/" + name)
            if let index { try MeteorAppGenerator.write(index, fixtures.versions + "/" + name + "/index.html") }
        }
        let h = try MeteorHarness(embedded: fixtures.embedded, versions: fixtures.versions, style: .webapp)
        h.keepAlive.append(folder)
        h.server.sendETags(etags)
        return h
    }

    static func render(_ generation: Int, appendSourceMapLine: Bool = false) -> MeteorRenderedVersion {
        MeteorShapedApp.render(MeteorScenarioFixtures.content(generation), shape: .current, appendSourceMapLine: appendSourceMapLine)
    }

    // bundler.js File#hash(): the manifest hash names no bytes, so without the ETag of
    // webapp_server.js nothing vouches for them: refused, nothing staged.
    @Test func bundlerJSSaltedHashIsRefusedWithoutAnETag() async throws {
        let v2 = Self.render(2)
        let script = try #require(v2.files.first { $0.type == "js" })
        #expect(script.hash != Digest.hex(.sha1, of: script.bytes), "the generated hash is salted, not a content SHA-1")
        let h = try Self.harness(["version2": (v2, nil)], etags: false)
        let before = h.state
        await #expect {
            try await h.check(serving: "version2")
        } throws: {
            let e = $0 as? MeteorError
            return e?.code == .hashMismatch && e?.message.contains("no ETag names the manifest hash") == true
        }
        #expect(try h.state == before && h.installedIDs.isEmpty)
    }

    // webapp_server.js: ETag "<manifest hash>" vouches; a quoted hash naming another
    // build is refused on the head, before the body is stored.
    @Test func webappServerJSETagNamingAnotherHashIsRefused() async throws {
        let v2 = Self.render(2)
        let h = try Self.harness(["version2": (v2, nil)])
        let script = try #require(v2.files.first { $0.type == "js" })
        let other = String(repeating: "ab", count: 20)
        h.server.override("/__cordova" + script.urlPath, with: .init(status: 200, headers: ["etag": "\"\(other)\""], body: script.bytes))
        await #expect {
            try await h.check(serving: "version2")
        } throws: {
            ($0 as? MeteorError)?.message == "Hash mismatch for asset: \(script.urlPath) (version version2, ETag \(other))"
        }
        h.server.override("/__cordova" + script.urlPath, with: nil)
        let outcome = try await h.check(serving: "version2")
        guard case .installed = outcome else {
            Issue.record("expected installed, got \(outcome)")
            return
        }
    }

    // bundler.js addSourceMappingURL: served JS may be longer than the manifest size.
    @Test func bundlerJSAppendedSourceMapLineFitsTheSizeCap() async throws {
        let v2 = Self.render(2, appendSourceMapLine: true)
        let script = try #require(v2.files.first { $0.type == "js" })
        let manifestSize = MeteorScenarioFixtures.content(2).scripts.map { "/* \($0.name) */\n\($0.source)\n" }.joined().utf8.count
        #expect(script.bytes.count > manifestSize)
        let h = try Self.harness(["version2": (v2, nil)])
        let outcome = try await h.check(serving: "version2")
        guard case .installed = outcome else {
            Issue.record("expected installed, got \(outcome)")
            return
        }
        // Far past the size (beyond the margin and the 1 MiB floor): refused.
        var huge = script
        huge.bytes = Data(count: (1 << 20) + 8192)
        let h2 = try Self.harness(["version2": (v2, nil)])
        h2.server.override("/__cordova" + script.urlPath, with: .init(status: 200, headers: ["etag": "\"\(script.hash ?? "")\""], body: huge.bytes))
        await #expect {
            try await h2.check(serving: "version2")
        } throws: {
            ($0 as? MeteorError)?.code == .hashMismatch && ($0 as? MeteorError)?.message.contains("more than") == true
        }
    }

    // autoupdate_server.js: the page's version lives in autoupdate.versions["web.cordova"];
    // a manifest of version2 with the index page of version1 is a rolling deploy.
    @Test func autoupdateServerJSVersionMismatchIsRetriedLater() async throws {
        let v1 = Self.render(1)
        let v2 = Self.render(2)
        let h = try Self.harness(["rolling": (v2, v1.indexHTML), "version2": (v2, nil)])
        let before = h.state
        await #expect {
            try await h.check(serving: "rolling")
        } throws: {
            let e = $0 as? MeteorError
            return e?.code == .versionMismatch && e?.kind == .tempFail
                && e?.message.contains("expected: version2, actual: version1") == true
        }
        #expect(h.state == before, "nothing staged, nothing blacklisted")
        #expect(try h.state.blacklist.isEmpty && h.state.retry.isEmpty && h.installedIDs.isEmpty)
        // Once every backend serves version2 the next check installs it.
        let outcome = try await h.check(serving: "version2")
        guard case .installed(let v) = outcome else {
            Issue.record("expected installed, got \(outcome)")
            return
        }
        #expect(v.id == "version2" && h.state.pending == "version2")
    }

    // Our integrity record: what a real interrupted download stored is reused after
    // re-checking its SHA-256; a leftover changed since is fetched again.
    @Test func partialDownloadReuseRechecksOurIntegrityRecord() async throws {
        let v2 = Self.render(2)
        let h = try Self.harness(["version2": (v2, nil)])
        h.server.serve("version2")
        // One download at a time, in manifest order; the last asset fails for good, so
        // everything before it is stored and recorded.
        h.maxConnections = 1
        let last = "/__cordova/some-other-file"
        h.server.override("/__cordova" + last, with: .init(status: 404))
        h.retry = RetryPolicy(maxAttempts: 1, initialDelay: .milliseconds(1), maxDelay: .milliseconds(1))
        await #expect(throws: MeteorError.self) { try await h.check() }
        let record = try String(contentsOfFile: h.layout.meteor + "/Downloading/.clientctl-integrity", encoding: .utf8)
        #expect(record.contains(" app/some-file\n"))
        // Tamper with one stored file (same size, other bytes).
        let someFile = h.layout.meteor + "/Downloading/app/some-file"
        let original = try Data(contentsOf: URL(fileURLWithPath: someFile))
        try Data(repeating: 0x41, count: original.count).write(to: URL(fileURLWithPath: someFile))
        h.server.override("/__cordova" + last, with: nil)
        let outcome = try await h.check(serving: "version2")
        guard case .installed = outcome else {
            Issue.record("expected installed, got \(outcome)")
            return
        }
        // Re-fetched: index.html, the tampered file and the missing one; the script, its
        // map and its stats were reused from PartialDownload/ (the CSS is the embedded one).
        #expect(h.server.requestedPathSet == ["/__cordova/manifest.json", "/__cordova/", "/__cordova/__cordova/some-file", "/__cordova" + last])
        try await h.reload()
        #expect(try h.servedContent("/some-file") == "some-file (changed)\n")
        #expect(!FileManager.default.fileExists(atPath: h.layout.meteor + "/version2/.clientctl-integrity"))
    }

    // The strict reader of the archive channel: duplicate keys are refused.
    @Test func aManifestWithDuplicateKeysIsRefused() throws {
        let text =
            #"{"format":"web-program-pre1","version":"v2","version":"v3","cordovaCompatibilityVersions":{"ios":"a","android":"b"},"manifest":[]}"#
        #expect {
            try AssetManifest.parse(Data(text.utf8), platform: .ios)
        } throws: {
            ($0 as? MeteorError)?.code == .invalidManifest && ($0 as? MeteorError)?.message.contains("duplicate key") == true
        }
    }

    // webapp_server.js routes and headers, as the mock serves them.
    @Test func theMockFollowsWebappServerJS() async throws {
        let v2 = Self.render(2)
        let h = try Self.harness(["version2": (v2, nil)])
        h.server.serve("version2")
        let script = try #require(v2.files.first { $0.type == "js" })
        let asset = h.server.respond(path: "/__cordova" + script.urlPath, query: "meteor_dont_serve_index=true")
        #expect(asset.status == 200 && asset.headers["etag"] == "\"\(script.hash ?? "")\"" && asset.body == script.bytes)
        let map = try #require(v2.files.first { $0.type == "map" })
        #expect(h.server.respond(path: "/__cordova" + map.urlPath, query: nil).headers["etag"]?.hasPrefix("W/\"") == true)
        let manifest = h.server.respond(path: "/__cordova/manifest.json", query: nil)
        #expect(manifest.headers["etag"] == "\"version2\"")
        let index = h.server.respond(path: "/__cordova/", query: nil)
        #expect(index.headers["etag"] == nil && index.headers["transfer-encoding"] == "chunked")
        #expect(try RuntimeConfig.extract(fromIndexHTML: String(decoding: index.body, as: UTF8.self)).webCordovaVersion == "version2")
        #expect(h.server.respond(path: "/__cordova/nothing", query: "meteor_dont_serve_index=true").status == 404)
        // Both listings of a public file answer, with and without the prefix.
        #expect(h.server.respond(path: "/__cordova/some-file", query: nil).body == Data("some-file (changed)\n".utf8))
        #expect(h.server.respond(path: "/__cordova/__cordova/some-file", query: nil).body == Data("some-file (changed)\n".utf8))
    }
}

import ClientFoundation
import ClientUpdater
import Foundation
import MeteorHotCodePush
import TestSupport
import Testing

/// Cases the reference suite lacks, on fixtures generated into `Fixtures/meteor/`.
@Suite struct MeteorGeneratedScenarioTests {
    static func harness(overHTTP: Bool = true) throws -> MeteorHarness {
        try MeteorHarness(embedded: GeneratedMeteorFixtures.embedded, versions: GeneratedMeteorFixtures.versions, overHTTP: overHTTP)
    }

    static func mapURL(generation: Int) -> String {
        let js = MeteorAppGenerator.files(GeneratedMeteorFixtures.spec, generation: generation)[1]
        return String(js.url)
    }

    static let gen2Requests = MeteorHarness.cordova(
        "/", "/app/app.js", mapURL(generation: 2),
        "/assets/d00/asset-0.txt", "/assets/d00/asset-1.txt")

    @Test func downloadsOnlyWhatChangedAndDescribesServedAssets() async throws {
        let h = try Self.harness()
        try await h.install("gen2")
        #expect(h.server.requestedPathSet == Self.gen2Requests)
        let v = try #require(try h.channel.installedVersions().first)
        let served = Dictionary(uniqueKeysWithValues: try h.channel.servedAssets(for: v).map { ($0.urlPath, $0) })
        #expect(served.count == 2 + 5 + 1)
        #expect(served["/"]?.sourceFile == v.directory + "/index.html" && served["/"]?.cacheable == false && served["/"]?.type == "html")
        let js = try #require(served["/app/app.js"])
        #expect(js.sourceFile == v.directory + "/app/app.js" && js.cacheable && js.type == "js")
        #expect(js.hash == (try Digest.hex(.sha1, ofFileAt: js.sourceFile)))
        #expect(js.sourceMapURLPath == Self.mapURL(generation: 2))
        #expect(served[Self.mapURL(generation: 2)]?.type == "json" && served[Self.mapURL(generation: 2)]?.hash == nil)
        // Unchanged assets are inherited from the embedded bundle.
        #expect(served["/assets/d00/asset-4.txt"]?.sourceFile == h.embeddedPath + "/app/assets/d00/asset-4.txt")
        #expect(served["/assets/d00/asset-0.txt"]?.sourceFile == v.directory + "/app/assets/d00/asset-0.txt")
    }

    @Test func rejectsATraversalInAnAssetURL() async throws {
        let h = try Self.harness()
        let before = h.state
        await #expect {
            try await h.check(serving: "traversal")
        } throws: { error in
            guard let e = error as? MeteorError else { return false }
            return e.code == .unsafePath && e.message.contains("/../../escape.txt") && e.kind == .dataError
        }
        #expect(h.server.requestedPathSet == ["/__cordova/manifest.json"])
        #expect(h.state == before)
        #expect(!FileManager.default.fileExists(atPath: h.layout.meteor + "/Downloading"))
        for dir in [h.temp.path, h.layout.root, (h.temp.path as NSString).deletingLastPathComponent] {
            #expect(!FileManager.default.fileExists(atPath: dir + "/escape.txt"))
        }
    }

    @Test func refusesAnIndexPageOfAnotherVersion() async throws {
        let h = try Self.harness()
        await #expect {
            try await h.check(serving: "gen2_then_gen3")
        } throws: {
            ($0 as? MeteorError)?.message.hasPrefix("Version mismatch for index page, expected: gen2, actual: gen3") == true
                && ($0 as? MeteorError)?.kind == .tempFail
        }
        // index.html is fetched and checked before any other asset.
        #expect(h.server.requestedPathSet == MeteorHarness.cordova("/"))
        #expect(try h.installedIDs.isEmpty)
    }

    @Test func refusesAssetsOfAnotherVersionWhenIndexCarriesNoVersion() async throws {
        let h = try Self.harness()
        await #expect {
            try await h.check(serving: "gen2_then_gen3_modern")
        } throws: {
            ($0 as? MeteorError)?.message.contains("Hash mismatch for asset: /app/app.js") == true
        }
        #expect(try h.installedIDs.isEmpty && h.state.pending == nil)
        // Once the server is consistent again the next check installs gen3.
        let outcome = try await h.check(serving: "gen3")
        guard case .installed(let v) = outcome else {
            Issue.record("expected installed, got \(outcome)")
            return
        }
        #expect(v.id == "gen3")
        // What this check asked for, counted at the client: a request the refused check
        // had already sent may still reach the server after that check threw.
        #expect(
            h.askedPathSet.isSubset(
                of: MeteorHarness.cordova(
                    "/", "/app/app.js", Self.mapURL(generation: 3), "/assets/d00/asset-0.txt", "/assets/d00/asset-1.txt",
                    "/assets/d00/asset-2.txt", "/assets/d00/asset-3.txt")))
    }

    /// The point the test waits for is the channel's first retry: the moment the refused
    /// attempt has failed and the next one has not begun. The held backoff lets the test
    /// start the server exactly there, so the retry meets it.
    @Test func retriesAfterARealConnectionRefusedAndRecovers() async throws {
        let h = try Self.harness()
        let http = try #require(h.http)
        http.stop()
        h.server.serve("gen2")
        let transport = FailureRecordingTransport()
        let backoff = try await HeldRetrySleeper()
        let channel = MeteorChannel(
            layout: h.layout, rootURL: http.baseURL, platform: .ios, embeddedPath: h.embeddedPath, transport: transport,
            options: .init(
                retry: RetryPolicy(maxAttempts: 3, initialDelay: .milliseconds(100), maxDelay: .milliseconds(100), jitter: 0), sleeper: backoff,
                logger: .quiet))
        let attempt = Task { () -> CheckOutcome in
            defer { backoff.checkEnded() }
            var state = h.state
            return try await channel.check(state: &state)
        }
        let raced = await Deadline.race(.seconds(60)) { () async -> String? in
            for await _ in backoff.retries { return nil }
            return "the check ended without retrying"
        }
        let retried: String?
        switch raced {
        case .success(let ended)?: retried = ended
        case .failure(let error)?: retried = "\(error)"
        case nil: retried = "no retry within 60 s"
        }
        guard retried == nil else {
            backoff.release()
            attempt.cancel()
            let result = await attempt.result
            Issue.record("\(retried ?? ""): \(result); failed requests: \(transport.failures)")
            return
        }
        #expect(transport.failures == ["connection refused"], "the one attempt so far was refused")
        #expect(h.server.requestedPaths.isEmpty, "nothing listens yet")
        try http.start()
        backoff.release()
        let outcome = try await attempt.value
        guard case .installed(let v) = outcome else {
            Issue.record("expected installed, got \(outcome)")
            return
        }
        #expect(v.id == "gen2")
        #expect(h.server.requestedPathSet == Self.gen2Requests)
        #expect(transport.failures == ["connection refused"], "every later attempt reached the server")
    }

    @Test func retriesAfterConnectionRefusedAndRecovers() async throws {
        let h = try Self.harness(overHTTP: false)
        h.transport.refuse(next: 2)
        let outcome = try await h.check(serving: "gen2")
        guard case .installed(let v) = outcome else {
            Issue.record("expected installed, got \(outcome)")
            return
        }
        #expect(v.id == "gen2")
        #expect(h.server.requestedPathSet == Self.gen2Requests)
    }

    @Test func givesUpWithANetworkErrorWhenTheServerStaysDown() async throws {
        let h = try Self.harness(overHTTP: false)
        h.transport.refuse(next: 100)
        await #expect {
            try await h.check(serving: "gen2")
        } throws: { error in
            guard let e = error as? any ClientctlError else { return false }
            return e.kind == .unavailable && e.message.contains("connection refused") && e.message.contains("after 4 attempts")
        }
        #expect(h.server.requestedPaths.isEmpty)
        // The same while assets download: the manifest arrives, then the server goes away.
        h.server.serve("gen2")
        h.transport.refuse(next: 0)
        let refusing = RefusingAfterManifest(inner: h.transport)
        var state = h.state
        let channel = MeteorChannel(
            layout: h.layout, rootURL: try #require(URL(string: "http://127.0.0.1:3000/")), platform: .ios,
            embeddedPath: h.embeddedPath, transport: refusing, options: .init(retry: h.retry, logger: .quiet))
        await #expect {
            try await channel.check(state: &state)
        } throws: { error in
            guard let e = error as? MeteorError else { return false }
            return e.code == .network && e.kind == .unavailable && e.message.contains("after 4 attempts")
        }
    }

    @Test func catchesWrongBytesWhenTheServerSendsNoETag() async throws {
        let h = try Self.harness()
        h.server.sendETags(false)
        await #expect {
            try await h.check(serving: "gen2_wrong_bytes")
        } throws: { error in
            guard let e = error as? MeteorError else { return false }
            return e.code == .hashMismatch && e.message.contains("Hash mismatch for asset: /app/app.js") && e.message.contains("content SHA-1")
        }
        #expect(try h.installedIDs.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: h.layout.meteor + "/Downloading/app/app.js"))
    }

    @Test func neverReusesACorruptFileFromPartialDownload() async throws {
        let h = try Self.harness()
        // An interrupted gen2 download: asset-0 intact, asset-1 corrupted on disk (same size).
        let g = MeteorAppGenerator.self
        let spec = GeneratedMeteorFixtures.spec
        let downloading = h.layout.meteor + "/Downloading"
        try AtomicFile.makeDirectory(downloading + "/app/assets/d00")
        try g.manifest(spec, generation: 2, version: "gen2").write(to: URL(fileURLWithPath: downloading + "/program.json"))
        let files = g.files(spec, generation: 2)
        let asset0 = try #require(files.first { $0.path.hasSuffix("asset-0.txt") })
        let asset1 = try #require(files.first { $0.path.hasSuffix("asset-1.txt") })
        try asset0.bytes.write(to: URL(fileURLWithPath: downloading + "/" + asset0.path))
        var corrupt = asset1.bytes
        corrupt[corrupt.count - 1] ^= 0x01
        try corrupt.write(to: URL(fileURLWithPath: downloading + "/" + asset1.path))

        let outcome = try await h.check(serving: "gen2")
        guard case .installed(let v) = outcome else {
            Issue.record("expected installed, got \(outcome)")
            return
        }
        #expect(h.server.requestedPathSet == MeteorHarness.cordova("/", "/app/app.js", Self.mapURL(generation: 2), "/assets/d00/asset-1.txt"))
        #expect(try Digest.hex(.sha1, ofFileAt: v.directory + "/" + asset1.path) == asset1.hash)
        #expect(try Digest.hex(.sha1, ofFileAt: v.directory + "/" + asset0.path) == asset0.hash)
    }

    @Test func toleratesAMissingSourceMap() async throws {
        let h = try Self.harness()
        h.server.override("/__cordova" + Self.mapURL(generation: 2), with: .init(status: 404))
        let outcome = try await h.check(serving: "gen2")
        guard case .installed(let v) = outcome else {
            Issue.record("expected installed, got \(outcome)")
            return
        }
        let served = try h.channel.servedAssets(for: v).map(\.urlPath)
        #expect(!served.contains(Self.mapURL(generation: 2)) && served.contains("/app/app.js"))
    }

    @Test func aServerErrorIsRetriedAndAClientErrorIsNot() async throws {
        let h = try Self.harness()
        h.server.override("/__cordova/assets/d00/asset-0.txt", with: .init(status: 403))
        await #expect {
            try await h.check(serving: "gen2")
        } throws: { ($0 as? MeteorError)?.message.contains("Non-success status code 403 for asset: /assets/d00/asset-0.txt") == true }
        #expect(h.server.requestedPaths.filter { $0 == "/__cordova/assets/d00/asset-0.txt" }.count == 1)
        h.server.override("/__cordova/assets/d00/asset-0.txt", with: .init(status: 503))
        await #expect { try await h.check(serving: "gen2") } throws: { ($0 as? MeteorError)?.code == .httpStatus }
        #expect(h.server.requestedPaths.filter { $0 == "/__cordova/assets/d00/asset-0.txt" }.count == 4)
    }

    /// The core's one shell-update rule, seen through a Meteor root: the next start (or
    /// check) after the embedded bundle changed drops every download and the version
    /// memory; appId and ROOT_URL stay, as on iOS.
    @Test func aShellUpdateDropsDownloadedVersionsAndResetsState() async throws {
        let h = try Self.harness()
        try await h.install("gen2")
        try h.updateState { $0.blacklist = ["x"] }
        #expect(try await h.restart().shellUpdateReset == false)
        #expect(h.state.current == "gen2" && h.state.blacklist == ["x"])
        try h.updateState { $0.lastSeenEmbeddedVersion = "an-older-shell" }
        let report = try await h.restart()
        #expect(report.shellUpdateReset && report.current == .embedded)
        #expect(!FileManager.default.fileExists(atPath: h.layout.meteor + "/gen2"))
        #expect(h.state.current == nil && h.state.lastKnownGood == nil && h.state.blacklist.isEmpty)
        #expect(h.state.meteor?.lastDownloadedVersion == nil && h.state.meteor?.appId == "generatedappid")
        #expect(h.state.lastSeenEmbeddedVersion == "gen1")
        // A check notices a shell update too (a root updated by `install` alone).
        try await h.install("gen2")
        try h.updateState { $0.lastSeenEmbeddedVersion = "an-older-shell" }
        let outcome = try await h.check(serving: "gen2")
        #expect(outcome.message == "installed gen2", "gen2 was dropped with the old shell, so it is fetched again")
        #expect(h.state.lastSeenEmbeddedVersion == "gen1" && h.state.lastKnownGood == nil && h.state.pending == "gen2")
    }

    @Test func selectionSkipsABlacklistedOrMissingLastDownload() async throws {
        let h = try Self.harness()
        try await h.check(serving: "gen2")
        #expect(try await h.selectedAfterRestart() == "gen2")
        try h.updateState { $0.blacklist = ["gen2"] }
        #expect(try await h.selectedAfterRestart() == nil)
        try h.updateState { $0.blacklist = [] }
        try h.channel.remove(try #require(try h.channel.installedVersions().first))
        #expect(try await h.selectedAfterRestart() == nil)
    }
}

/// Passes the manifest request through, then refuses every connection.
struct RefusingAfterManifest: Transport {
    let inner: MeteorMockTransport
    func get(_ request: TransportRequest, sink: @Sendable (UnsafeRawBufferPointer) throws -> Void) async throws -> TransportResponse {
        guard request.url.path.hasSuffix("manifest.json") else { throw UpdaterError.network(request.url, .refused) }
        return try await inner.get(request, sink: sink)
    }
}
